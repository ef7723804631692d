import NIOCore
import NIOPosix
import ServiceLifecycle
import SkirmishNet
import SkirmishServer

/// A small HTTP server for pages (`skirmish practice --target`) as a ``Service``: listens when the group starts (a
/// taken port throws a `ListenError` naming `--http`), publishes itself in ``started``, and closes when the group stops.
package struct PageServerService: Service {
    package let host: String
    package let port: Int
    package let routes: [String: HTTPServer.Route]
    package let group: any EventLoopGroup
    package let started: Ready<HTTPServer>

    package init(
        host: String, port: Int, routes: [String: HTTPServer.Route],
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, started: Ready<HTTPServer> = Ready()
    ) {
        self.host = host
        self.port = port
        self.routes = routes
        self.group = group
        self.started = started
    }

    package func run() async throws {
        let pages: HTTPServer
        do {
            pages = try await ListenError.naming("http", host: host, port: port) {
                try await HTTPServer.bind(
                    host: host, port: port, group: group, routes: routes, webSocketPath: nil, onWebSocket: nil)
            }
        } catch {
            started.fail(error)
            throw error
        }
        started.fulfil(pages)
        _ = await Stopping.wait()
        try? await pages.close()
    }
}
