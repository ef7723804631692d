import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SkirmishNet
import SkirmishServer

/// The reference match server as a ``Service``: binds its listeners when the group starts, publishes itself in
/// ``started`` for the parts that need its addresses, and on shutdown sends every player `ServerQuit` and closes.
///
/// A listener that cannot bind throws the server's `ListenError` from ``run()``, after the server closed what it had
/// opened: the group cancels the other parts and the command reports the error.
package struct ReferenceServerService: Service {
    package let configuration: ServerConfiguration
    package let group: any EventLoopGroup
    package let routes: [String: HTTPServer.Route]
    /// The running server, once its listeners are bound.
    package let started: Ready<ReferenceServer>
    /// Told once the listeners are bound (the listening lines), and when a graceful stop begins.
    package var onStart: @Sendable (ReferenceServer) async -> Void = { _ in }
    package var onStop: @Sendable () -> Void = {}
    /// Where the server logs its start, stop and rejected input.
    package var logger = Logger(label: "skirmish.server")

    package init(
        configuration: ServerConfiguration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        routes: [String: HTTPServer.Route] = [:], started: Ready<ReferenceServer> = Ready()
    ) {
        self.configuration = configuration
        self.group = group
        self.routes = routes
        self.started = started
    }

    package func run() async throws {
        let server: ReferenceServer
        do {
            server = try await ReferenceServer.start(
                configuration: configuration, group: group, routes: routes, logger: logger)
        } catch {
            started.fail(error)
            throw error
        }
        await onStart(server)
        started.fulfil(server)
        if await Stopping.wait() == .graceful { onStop() }
        await server.shutdown()
    }
}
