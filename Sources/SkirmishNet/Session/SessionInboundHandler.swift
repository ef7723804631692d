import NIOCore
import NIOHTTP1
import NIOWebSocket
import SkirmishWire

/// Hands what a session's channel reads to the session; one generic handler for the three transports.
///
/// The generation number ties the handler to the channel the session opened: after a resume the old channel's late
/// reads and errors are ignored.
final class SessionInboundHandler<Inbound>: ChannelInboundHandler {
    typealias InboundIn = Inbound

    private let session: NIOLoopBound<ClientSession>
    private let generation: Int

    init(session: NIOLoopBound<ClientSession>, generation: Int) {
        self.session = session
        self.generation = generation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let envelope as AddressedEnvelope<ByteBuffer>:
            session.value.received(envelope.data, from: envelope.remoteAddress, generation: generation)
        case let buffer as ByteBuffer:
            session.value.received(buffer, from: nil, generation: generation)
        case let frame as WebSocketFrame:
            switch frame.opcode {
            case .binary:
                session.value.received(frame.unmaskedData, from: nil, generation: generation)
            case .ping:
                let pong = WebSocketFrame(
                    fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
                context.writeAndFlush(NIOAny(pong), promise: nil)
            case .connectionClose:
                context.close(promise: nil)
            case .text:
                session.value.transportFailed(FrameError.notBinary, generation: generation)
            default:
                break
            }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        session.value.transportFailed(error, generation: generation)
    }

    func channelInactive(context: ChannelHandlerContext) {
        session.value.transportClosed(generation: generation)
        context.fireChannelInactive()
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
                        SessionInboundHandler<WebSocketFrame>(session: session, generation: generation))
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
