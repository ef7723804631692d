import NIOCore
import NIOPosix
import SkirmishWire
import Synchronization

/// A bare TCP connection to the server for tests that must send what no well-behaved client would: half a frame,
/// a half request head, hand-built WebSocket frames.
final class RawStream: Sendable {
    let channel: any Channel
    private let inbox: Inbox

    /// What the server sent so far and whether it closed, filled on the channel's loop.
    final class Inbox: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let state = Mutex<(bytes: [UInt8], closed: Bool)>(([], false))

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            state.withLock { $0.bytes += buffer.readableBytesView }
        }

        func channelInactive(context: ChannelHandlerContext) {
            state.withLock { $0.closed = true }
        }
    }

    private init(channel: any Channel, inbox: Inbox) {
        self.channel = channel
        self.inbox = inbox
    }

    /// Connects to `port` on 127.0.0.1; `first` (if any) is written on the channel's loop the moment the connection
    /// is up, so no stall of the test's own thread can come between the two (a timeout counted from the connect).
    ///
    /// `source` is the local address to connect from (any of 127.0.0.0/8 on loopback): another host, to the server.
    static func connect(
        port: Int, group: any EventLoopGroup, from source: String? = nil, sending first: [UInt8] = []
    ) async throws -> RawStream {
        let inbox = Inbox()
        var bootstrap = ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(inbox) }
            }
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel =
            try await bootstrap
            .connect(host: "127.0.0.1", port: port)
            .flatMap { channel in
                guard !first.isEmpty else { return channel.eventLoop.makeSucceededFuture(channel) }
                return channel.writeAndFlush(ByteBuffer(bytes: first)).map { channel }
            }
            .get()
        return RawStream(channel: channel, inbox: inbox)
    }

    func write(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// Everything the server sent until it closed the connection, or ``Timeout`` after `limit`.
    func readUntilClosed(within limit: Duration) async throws -> [UInt8] {
        try await eventually(within: limit) { self.inbox.state.withLock { $0.closed } }
        return inbox.state.withLock { $0.bytes }
    }

    /// What the server sent once `done` says it is enough, or ``Timeout`` after `limit`.
    func read(within limit: Duration, until done: @escaping @Sendable ([UInt8]) -> Bool) async throws -> [UInt8] {
        try await eventually(within: limit) { done(self.inbox.state.withLock { $0.bytes }) }
        return inbox.state.withLock { $0.bytes }
    }

    /// Whether the server closed the connection.
    var isClosed: Bool { inbox.state.withLock { $0.closed } }

    /// Forgets what was read so far.
    func clear() { inbox.state.withLock { $0.bytes = [] } }

    func close() async { try? await channel.close() }

    /// A packet as a TCP frame: its length as a big-endian u32, then its bytes.
    static func frame(_ packet: Packet) -> [UInt8] {
        let body = encode(packet)
        let length = UInt32(body.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + body
    }

    /// A WebSocket frame as a client sends it (RFC 6455 §5.2), masked unless `masked` is false.
    static func webSocketFrame(opcode: UInt8, fin: Bool = true, payload: [UInt8], masked: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if payload.count < 126 {
            bytes.append(maskBit | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes += [maskBit | 127] + (0..<8).reversed().map { UInt8(payload.count >> ($0 * 8) & 0xFF) }
        }
        guard masked else { return bytes + payload }
        let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    static let webSocketUpgrade = Array(
        """
        GET /ws HTTP/1.1\r
        Host: 127.0.0.1\r
        Upgrade: websocket\r
        Connection: Upgrade\r
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
        Sec-WebSocket-Version: 13\r
        \r

        """.utf8)

    /// Whether `bytes` end the upgrade response (its blank line).
    static func upgraded(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes.indices.dropLast(3).contains { bytes[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }
    }
}
