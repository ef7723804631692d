import NIOCore
import NIOHTTP1
import NIOWebSocket
import SkirmishWire

/// Hands what a session's channel reads to the session: one small handler per transport, each with a concrete
/// inbound type, so a packet costs no dynamic cast on its way in.
///
/// The generation number ties the handler to the channel the session opened: after a resume the old channel's late
/// reads and errors are ignored.
struct SessionLink {
    let session: NIOLoopBound<ClientSession>
    let generation: Int

    func received(_ bytes: ByteBuffer, from address: SocketAddress?) {
        session.value.received(bytes, from: address, generation: generation)
    }

    func failed(_ error: any Error) {
        session.value.transportFailed(error, generation: generation)
    }

    func closed() {
        session.value.transportClosed(generation: generation)
    }
}

/// A session's channel handler: errors and the channel's end go to the session through its ``SessionLink``.
protocol SessionLinkHandler: ChannelInboundHandler {
    var link: SessionLink { get }
}

extension SessionLinkHandler {
    func errorCaught(context: ChannelHandlerContext, error: any Error) { link.failed(error) }

    func channelInactive(context: ChannelHandlerContext) {
        link.closed()
        context.fireChannelInactive()
    }
}

/// UDP: each datagram is one packet.
final class DatagramSessionHandler: SessionLinkHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    let link: SessionLink
    /// The session, taken out of its loop-bound box once the handler is on the loop: every datagram then reaches it
    /// without a check of the current thread.
    private var session: ClientSession?
    private let generation: Int

    init(session: NIOLoopBound<ClientSession>, generation: Int) {
        link = SessionLink(session: session, generation: generation)
        self.generation = generation
    }

    func handlerAdded(context: ChannelHandlerContext) {
        session = link.session.value
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        session = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        session?.received(envelope.data, from: envelope.remoteAddress, generation: generation)
    }
}

/// TCP: each frame body (after ``PacketFrameCodec/FrameSlicing``) is one packet.
final class StreamSessionHandler: SessionLinkHandler {
    typealias InboundIn = ByteBuffer

    let link: SessionLink

    init(session: NIOLoopBound<ClientSession>, generation: Int) {
        link = SessionLink(session: session, generation: generation)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        link.received(unwrapInboundIn(data), from: nil)
    }
}

/// WebSocket: each binary message is one packet; pings are answered, text is an error.
final class WebSocketSessionHandler: SessionLinkHandler {
    typealias InboundIn = WebSocketFrame

    let link: SessionLink

    init(session: NIOLoopBound<ClientSession>, generation: Int) {
        link = SessionLink(session: session, generation: generation)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary:
            link.received(frame.unmaskedData, from: nil)
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(NIOAny(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        case .text:
            link.failed(FrameError.notBinary)
        default:
            break
        }
    }
}

/// The client side of the WebSocket upgrade: an HTTP GET to the target's path, then binary frames.
enum WebSocketClientSetup {
    static func configure(
        _ channel: any Channel, target: Target, session: NIOLoopBound<ClientSession>, generation: Int
    ) throws {
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: WireLimits.maxFrame + 16,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    channel.pipeline.syncOperations.removeHandler(name: UpgradeRequester.name, promise: nil)
                    try channel.pipeline.syncOperations.addHandler(
                        WebSocketSessionHandler(session: session, generation: generation))
                    session.value.webSocketReady(generation: generation)
                }
            })
        let configuration: NIOHTTPClientUpgradeConfiguration = (
            upgraders: [upgrader], completionHandler: { _ in }
        )
        try channel.pipeline.syncOperations.addHTTPClientHandlers(withClientUpgrade: configuration)
        try channel.pipeline.syncOperations.addHandler(UpgradeRequester(target: target), name: UpgradeRequester.name)
    }

    static func binaryFrame(_ payload: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: payload)
    }
}

/// Sends the upgrade request once the TCP connection is up; the upgrade handler adds the WebSocket headers.
private final class UpgradeRequester: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    static let name = "skirmish.upgrade-request"
    private let target: Target

    init(target: Target) {
        self.target = target
    }

    func channelActive(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(target.host):\(target.port)")
        headers.add(name: "Content-Length", value: "0")
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A plain HTTP answer means the server refused the upgrade.
        if case .head(let head) = unwrapInboundIn(data), head.status != .switchingProtocols {
            context.fireErrorCaught(FrameError.notBinary)
            context.close(promise: nil)
        }
    }
}
