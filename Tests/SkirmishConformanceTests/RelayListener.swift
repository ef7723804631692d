import NIOCore
import NIOPosix

/// A TCP listener on loopback, on one thread, that gives every connection it accepts an upstream connection of its
/// own to `server`, on the same loop: the common part of the stream proxies (``StreamFaultProxy``,
/// ``WebSocketCloseProxy``), which differ only in how they cut and rewrite the bytes in between.
final class RelayListener: Sendable {
    /// What joins one client connection to its upstream: it holds what the client sends until the upstream is there.
    protocol Pipe: AnyObject {
        /// The upstream connection is open.
        func attach(_ upstream: any Channel)
        /// Either side ended, or the upstream could not be reached.
        func close()
    }

    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel

    private init(port: Int, group: MultiThreadedEventLoopGroup, listener: any Channel) {
        self.port = port
        self.group = group
        self.listener = listener
    }

    /// Listens on a free port, with Nagle's algorithm off both ways (NIO's own default for a client). `client` sets up an accepted connection's handlers and returns its pipe; `upstream`
    /// sets up the handlers of that connection's upstream, given its pipe.
    static func start(
        server: SocketAddress,
        client setUpClient: @escaping @Sendable (any Channel) throws -> any Pipe,
        upstream setUpUpstream: @escaping @Sendable (any Channel, any Pipe) throws -> Void
    ) async throws -> RelayListener {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { client in
                client.eventLoop.makeCompletedFuture {
                    let pipe = try setUpClient(client)
                    // The pipe is confined to the client's loop, which the upstream shares.
                    let confined = NIOLoopBound(pipe, eventLoop: client.eventLoop)
                    ClientBootstrap(group: client.eventLoop)
                        .channelOption(.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { upstream in
                            upstream.eventLoop.makeCompletedFuture { try setUpUpstream(upstream, confined.value) }
                        }
                        .connect(to: server)
                        .whenComplete { result in
                            switch result {
                            case .success(let upstream): confined.value.attach(upstream)
                            case .failure: confined.value.close()
                            }
                        }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RelayListener(port: listener.localAddress!.port!, group: group, listener: listener)
    }

    func stop() async {
        try? await listener.close()
        try? await group.shutdownGracefully()
    }
}
