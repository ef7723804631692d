import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SkirmishWire

/// A stream channel's way back to its shell: the client loop, the shell's index there and the slot's socket
/// generation, so an event of a socket the slot has since closed is recognised and ignored.
///
/// It holds no reference to the shell: each event hops to the loop and finds the shell registered there, if it still
/// is (a stopped shell, or a loop whose thread ended, drops the event).
struct StreamLink: Sendable {
    let loop: ClientLoop
    let delegate: UInt8
    let slot: UInt32
    let generation: UInt32

    func opened(_ channel: any Channel, transport: Transport) {
        loop.execute { [self] in
            loop.delegate(at: delegate)?.streamOpened(channel, transport, slot, generation, .now())
        }
    }

    func received(_ bytes: ByteBuffer) {
        loop.execute { [self] in
            loop.delegate(at: delegate)?.streamReceived(bytes, slot, generation, .now())
        }
    }

    func failed(_ text: String) {
        loop.execute { [self] in
            loop.delegate(at: delegate)?.streamFailed(text, slot, generation, .now())
        }
    }
}

/// Opens TCP and WebSocket channels for sessions and writes their packets.
@usableFromInline
enum StreamConnector {
    static func connect(target: Target, group: any EventLoopGroup, timeout: TimeAmount, link: StreamLink) {
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    switch target.transport {
                    case .tcp:
                        // The protocol plug-in frames the stream itself: bytes go up as they arrive.
                        try channel.pipeline.syncOperations.addHandler(ByteLinkHandler(link: link))
                    case .webSocket, .udp:
                        try WebSocketLinkSetup.configure(channel, target: target, link: link)
                    }
                }
            }
        bootstrap.connect(host: target.host, port: target.port).whenComplete { result in
            switch result {
            case .success(let channel):
                if target.transport == .tcp { link.opened(channel, transport: .tcp) }
            // WebSocket: opened once the upgrade completes.
            case .failure(let error):
                link.failed("\(error)")
            }
        }
    }

    /// Writes bytes a plug-in produced: over TCP as they are (the plug-in framed them), over WebSocket as one
    /// masked binary message.
    @usableFromInline
    static func write(_ bytes: UnsafeRawBufferPointer, to channel: any Channel, transport: Transport) {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        switch transport {
        case .tcp:
            buffer.writeBytes(bytes)
            channel.writeAndFlush(buffer, promise: nil)
        case .webSocket, .udp:
            buffer.writeBytes(bytes)
            channel.writeAndFlush(
                WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: buffer), promise: nil)
        }
    }
}

/// What both stream handlers share: an error or the end of the channel reaches the session once.
protocol StreamLinkHandler: ChannelInboundHandler {
    var link: StreamLink { get }
    var reported: Bool { get set }
}

extension StreamLinkHandler {
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        report("\(error)")
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        report("the server closed the connection")
        context.fireChannelInactive()
    }

    func report(_ text: String) {
        guard !reported else { return }
        reported = true
        link.failed(text)
    }
}

/// TCP: bytes as they arrive, for the plug-in to frame.
final class ByteLinkHandler: StreamLinkHandler {
    typealias InboundIn = ByteBuffer

    let link: StreamLink
    var reported = false

    init(link: StreamLink) {
        self.link = link
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        link.received(unwrapInboundIn(data))
    }

}

/// WebSocket: each binary message is one packet; pings are answered; text is an error (RFC 6455 §5.6: this protocol
/// carries binary only).
final class WebSocketLinkHandler: StreamLinkHandler {
    typealias InboundIn = WebSocketFrame

    let link: StreamLink
    var reported = false

    init(link: StreamLink) {
        self.link = link
    }

    func handlerAdded(context: ChannelHandlerContext) {
        link.opened(context.channel, transport: .webSocket)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary:
            link.received(frame.unmaskedData)
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.unmaskedData)
            context.writeAndFlush(NIOAny(pong), promise: nil)
        case .connectionClose:
            context.close(promise: nil)
        case .text:
            report("\(FrameError.notBinary)")
            context.close(promise: nil)
        default:
            break
        }
    }

}

/// The client side of the WebSocket upgrade: an HTTP GET to the target's path, then binary frames.
package enum WebSocketLinkSetup {
    /// Adds the HTTP client and upgrade handlers to `channel`: once the server switches protocols `upgraded` adds
    /// the handlers that read the frames; a refusal, an error or a close before that is reported to `failed`.
    package static func configure(
        _ channel: any Channel, target: Target, upgraded: @escaping @Sendable (any Channel) throws -> Void,
        failed: @escaping (String) -> Void
    ) throws {
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: WireLimits.maxFrame + 16,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    channel.pipeline.syncOperations.removeHandler(name: UpgradeRequest.name, promise: nil)
                    try upgraded(channel)
                }
            })
        let configuration: NIOHTTPClientUpgradeConfiguration = (upgraders: [upgrader], completionHandler: { _ in })
        try channel.pipeline.syncOperations.addHTTPClientHandlers(withClientUpgrade: configuration)
        try channel.pipeline.syncOperations.addHandler(
            UpgradeRequest(target: target, failed: failed), name: UpgradeRequest.name)
    }

    static func configure(_ channel: any Channel, target: Target, link: StreamLink) throws {
        try configure(
            channel, target: target,
            upgraded: { try $0.pipeline.syncOperations.addHandler(WebSocketLinkHandler(link: link)) },
            failed: link.failed)
    }
}

/// Sends the upgrade request once the TCP connection is up; a plain HTTP answer means the server refused it.
private final class UpgradeRequest: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    static let name = "skirmish.upgrade-request"
    private let target: Target
    private let failed: (String) -> Void

    init(target: Target, failed: @escaping (String) -> Void) {
        self.target = target
        self.failed = failed
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
        if case .head(let head) = unwrapInboundIn(data), head.status != .switchingProtocols {
            failed("the server refused the WebSocket upgrade: \(head.status.code) \(head.status.reasonPhrase)")
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failed("\(error)")
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failed("the server closed the connection before the WebSocket upgrade")
        context.fireChannelInactive()
    }
}
