import Logging
import ServiceLifecycle
import SkirmishServer
import SkirmishTelemetry
import Synchronization

/// What `skirmish serve` runs, as one ``ServiceGroup``: the reference server, then the exporter pushing its metrics.
/// SIGINT or SIGTERM stops them in reverse — the final push, then `ServerQuit` to every player and the listeners
/// closed. A listener that cannot bind throws its `ListenError` with nothing left open.
package final class ServeRun: Sendable {
    package let configuration: ServerConfiguration
    package let signals: SignalWatch
    package let server = Ready<ReferenceServer>()
    private let console: RunConsole
    private let makeExporter: @Sendable (any MetricsSource) throws -> Exporter?
    private let logger: Logger
    private let handle = GroupHandle()

    /// `makeExporter` makes the exporter for the server's metrics (`nil`: no `--push`); `logger` is the server's.
    package init(
        configuration: ServerConfiguration, console: RunConsole, logger: Logger = Logger(label: "skirmish.server"),
        makeExporter: @escaping @Sendable (any MetricsSource) throws -> Exporter? = { _ in nil }
    ) {
        self.configuration = configuration
        self.logger = logger
        self.console = console
        self.makeExporter = makeExporter
        signals = SignalWatch { name in console.note("\(name): telling every player the server is quitting") }
    }

    /// Runs until SIGINT, SIGTERM or ``triggerGracefulShutdown()``.
    package func run(pushNote: @escaping @Sendable () -> String = { "" }) async throws {
        let console = self.console
        var serverService = ReferenceServerService(configuration: configuration, started: server)
        serverService.logger = logger
        serverService.onStart = { server in
            for line in server.addresses.listeningLines { console.line(line) }
        }
        var parts = [CommandGroup.part(signals, "signals"), CommandGroup.part(serverService, "reference server")]
        let server = self.server
        let source = ServerMetricsSource(server: server)
        if let exporter = try makeExporter(source) {
            var exporterService = ExporterService(exporter)
            exporterService.after = { _ = try await server.value() }
            exporterService.onStart = { console.note(pushNote()) }
            exporterService.onStop = { stats in console.note(stats.summary) }
            parts.append(CommandGroup.part(exporterService, "exporter"))
        }
        let group = CommandGroup.make(parts)
        try await handle.run(group)
    }

    /// Stops the server as SIGTERM would.
    package func triggerGracefulShutdown() async {
        await handle.triggerGracefulShutdown()
    }
}

/// The server's metrics once it runs (empty before).
private struct ServerMetricsSource: MetricsSource {
    let server: Ready<ReferenceServer>

    func collect() -> MetricsSnapshot {
        server.current?.metricsSource.collect() ?? MetricsSnapshot()
    }
}
