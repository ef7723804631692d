import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP endpoint that accepts any request and answers 204: a collector that costs nothing, so a
/// benchmark measures the exporter and not the collector.
package final class PushSink: Sendable {
    package let port: Int
    private let channel: any Channel
    private let counter: RequestCounter

    private init(port: Int, channel: any Channel, counter: RequestCounter) {
        self.port = port
        self.channel = channel
        self.counter = counter
    }

    /// Requests answered so far.
    package var requests: Int { counter.value.load(ordering: .relaxed) }

    package static func start(group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws
        -> PushSink
    {
        let counter = RequestCounter()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(SinkHandler(counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw BenchError("the push sink did not get a port")
        }
        return PushSink(port: port, channel: channel, counter: counter)
    }

    package func close() async throws { try await channel.close() }
}

private final class RequestCounter: Sendable {
    let value = Atomic<Int>(0)
}

private final class SinkHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let counter: RequestCounter
    private var keepAlive = true

    init(counter: RequestCounter) {
        self.counter = counter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            counter.value.add(1, ordering: .relaxed)
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "0")
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .noContent, headers: headers))),
                promise: nil)
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !keepAlive { done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) } }
        }
    }
}
