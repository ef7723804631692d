import Logging
import NIOCore
import ServiceLifecycle
import SkirmishNet
import SkirmishPractice
import SkirmishServer
import SkirmishWire

/// What `skirmish practice` runs, as one ``ServiceGroup``: the page's listener (the embedded server's HTTP listener,
/// or a page server beside the `--target` game server), then the lobby of AI opponents. SIGINT or SIGTERM stops the
/// opponents, then the listener; a listener that cannot bind throws its `ListenError` with nothing left open.
package final class PracticeRun: Sendable {
    package let lobby: PracticeLobby
    package let host: String
    package let port: Int
    /// A game server's WebSocket endpoint to play on, or `nil` for the embedded server.
    package let target: Target?
    package let signals: SignalWatch
    /// The page's address once it listens.
    package let pageAddress = Ready<SocketAddress>()
    private let console: RunConsole
    private let handle = GroupHandle()
    private let serverLogger: Logger

    /// `serverLogger` is the embedded server's (unused with a `target`).
    package init(
        lobby: PracticeLobby, host: String, port: Int, target: Target?, console: RunConsole,
        serverLogger: Logger = Logger(label: "skirmish.server")
    ) {
        self.serverLogger = serverLogger
        self.lobby = lobby
        self.host = host
        self.port = port
        self.target = target
        self.console = console
        signals = SignalWatch { name in console.note("\(name): stopping the opponents") }
    }

    /// The page's URL for a listener at `port`.
    package func pageURL(port: Int) -> String {
        let host = Self.connectHost(self.host)
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(PracticePage.path)"
    }

    /// Runs until SIGINT, SIGTERM or ``triggerGracefulShutdown()``.
    package func run() async throws {
        let console = self.console
        let address = pageAddress
        let host = Self.connectHost(self.host)
        var parts = [CommandGroup.part(signals, "signals")]
        let lobbyService: PracticeLobbyService
        if let target {
            let pages = PageServerService(host: self.host, port: port, routes: lobby.routes)
            parts.append(CommandGroup.part(pages, "page server"))
            lobbyService = PracticeLobbyService(lobby: lobby) {
                address.fulfil(try await pages.started.value().localAddress)
                return (target, target.description)
            }
        } else {
            var configuration = ServerConfiguration()
            configuration.udp = nil
            configuration.tcp = nil
            configuration.http = ServerConfiguration.Listen(host: self.host, port: port)
            var service = ReferenceServerService(configuration: configuration, routes: lobby.routes)
            service.logger = serverLogger
            let server = service
            parts.append(CommandGroup.part(server, "reference server"))
            lobbyService = PracticeLobbyService(lobby: lobby) {
                guard let http = try await server.started.value().addresses.http else {
                    throw RunError.input("the HTTP listener did not start")
                }
                address.fulfil(http)
                return (Target(transport: .webSocket, host: host, port: http.port ?? 0), nil)
            }
        }
        var lobbyPart = lobbyService
        let difficulty = await lobby.difficulty
        lobbyPart.onStart = { [self] in
            let url = pageURL(port: address.current?.port ?? 0)
            console.line("practice \(url)")
            console.note("open \(url) in a browser to play against a \(difficulty) AI; Ctrl-C stops")
        }
        parts.append(CommandGroup.part(lobbyPart, "practice lobby"))
        try await handle.run(CommandGroup.make(parts))
    }

    /// Stops the opponents and the listener as SIGTERM would.
    package func triggerGracefulShutdown() async {
        await handle.triggerGracefulShutdown()
    }

    /// A listener on every address is reached on loopback.
    package static func connectHost(_ host: String) -> String {
        switch host {
        case "0.0.0.0": "127.0.0.1"
        case "::": "::1"
        default: host
        }
    }
}
