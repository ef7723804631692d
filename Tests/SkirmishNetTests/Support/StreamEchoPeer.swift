import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import SkirmishNet
import SkirmishWire

/// A TCP listener and a WebSocket endpoint on 127.0.0.1 that answer Hello with Welcome and echo every other packet,
/// recording the exact bytes of each packet they received.
///
/// The TCP side keeps the raw stream as well, so a test can check the length prefixes themselves; the WebSocket side
/// keeps each binary message's payload. Both decode with SkirmishNet's own server codecs (``PacketFrameCodec`` and
/// ``WebSocketPacketCodec``), the ones the reference server uses.
final class StreamEchoPeer: Sendable {
    let tcpAddress: SocketAddress
    let httpAddress: SocketAddress
    private let tcp: any Channel
    private let http: HTTPServer
    private let recording: NIOLockedValueBox<Recording>

    struct Recording: Sendable {
        /// Every byte read on TCP connections, in order (one client at a time in these tests).
        var tcpStream: [UInt8] = []
        /// The payload of every binary WebSocket message, in order.
        var webSocketMessages: [[UInt8]] = []
    }

    private init(
        tcpAddress: SocketAddress, httpAddress: SocketAddress, tcp: any Channel, http: HTTPServer,
        recording: NIOLockedValueBox<Recording>
    ) {
        self.tcpAddress = tcpAddress
        self.httpAddress = httpAddress
        self.tcp = tcp
        self.http = http
        self.recording = recording
    }

    static func start(group: any EventLoopGroup) async throws -> StreamEchoPeer {
        let recording = NIOLockedValueBox(Recording())
        let tcp = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StreamTap(recording: recording))
                    try channel.pipeline.syncOperations.addHandlers(PacketFrameCodec.handlers())
                    try channel.pipeline.syncOperations.addHandler(Echo())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let http = try await HTTPServer.bind(
            host: "127.0.0.1", port: 0, group: group, routes: [:], webSocketPath: "/ws",
            onWebSocket: { channel in
                // Called on the channel's loop while the upgrade completes, before any WebSocket frame is read.
                do {
                    let codec = try channel.pipeline.syncOperations.handler(type: WebSocketPacketCodec.self)
                    try channel.pipeline.syncOperations.addHandler(
                        MessageTap(recording: recording), position: .before(codec))
                    try channel.pipeline.syncOperations.addHandler(Echo())
                } catch {
                    channel.close(promise: nil)
                }
            })
        guard let tcpAddress = tcp.localAddress else { throw ChannelError.unknownLocalAddress }
        return StreamEchoPeer(
            tcpAddress: tcpAddress, httpAddress: http.localAddress, tcp: tcp, http: http, recording: recording)
    }

    var tcpTarget: Target { Target(transport: .tcp, host: "127.0.0.1", port: tcpAddress.port ?? 0) }
    var webSocketTarget: Target {
        Target(transport: .webSocket, host: "127.0.0.1", port: httpAddress.port ?? 0, path: "/ws")
    }

    var recorded: Recording { recording.withLockedValue { $0 } }

    func close() async {
        try? await tcp.close()
        try? await http.close()
    }

    /// Copies every inbound TCP byte before the framing decoder sees it.
    private final class StreamTap: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        let recording: NIOLockedValueBox<Recording>

        init(recording: NIOLockedValueBox<Recording>) {
            self.recording = recording
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            recording.withLockedValue { $0.tcpStream += buffer.readableBytesView }
            context.fireChannelRead(data)
        }
    }

    /// Copies the payload of every binary WebSocket message before the packet codec decodes it.
    private final class MessageTap: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias InboundOut = WebSocketFrame
        let recording: NIOLockedValueBox<Recording>

        init(recording: NIOLockedValueBox<Recording>) {
            self.recording = recording
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            if frame.opcode == .binary {
                let payload = Array(frame.unmaskedData.readableBytesView)
                recording.withLockedValue { $0.webSocketMessages.append(payload) }
            }
            context.fireChannelRead(data)
        }
    }

    /// Answers Hello with Welcome and sends every other packet straight back.
    private final class Echo: ChannelInboundHandler {
        typealias InboundIn = Packet
        typealias OutboundOut = Packet

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let packet = unwrapInboundIn(data)
            let reply: Packet
            if case .hello = packet.message {
                reply = Packet(.welcome(Welcome(peer: 7, match: 1, seat: 0, tickRate: 60, resumeToken: 9)))
            } else {
                reply = packet
            }
            context.writeAndFlush(wrapOutboundOut(reply), promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
