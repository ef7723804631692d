import Logging
import ServiceLifecycle
import SkirmishSwarm
import SkirmishTelemetry

/// A soak's health checks as a ``Service``: once the swarm runs, checks at once and every interval (rewriting the
/// checkpoint) until the group stops; the watch is published in ``started`` for the report.
package struct SoakWatchService: Service {
    package let swarm: Ready<Swarm>
    package let configuration: SoakWatch.Configuration
    package let exporterStats: @Sendable () -> ExporterStats?
    package let started: Ready<SoakWatch>
    package var onStart: @Sendable () -> Void = {}
    package var onChange: @Sendable (HealthVerdict) -> Void = { _ in }
    /// Where the watch logs health checks that change status.
    package var logger = Logger(label: "skirmish.soak")

    package init(
        swarm: Ready<Swarm>, configuration: SoakWatch.Configuration,
        exporterStats: @escaping @Sendable () -> ExporterStats?, started: Ready<SoakWatch> = Ready()
    ) {
        self.swarm = swarm
        self.configuration = configuration
        self.exporterStats = exporterStats
        self.started = started
    }

    package func run() async throws {
        let watch: SoakWatch
        do {
            watch = SoakWatch(
                swarm: try await swarm.value(), configuration: configuration, exporterStats: exporterStats,
                logger: logger)
        } catch {
            started.fail(error)
            throw error
        }
        started.fulfil(watch)
        onStart()
        let onChange = self.onChange
        await cancelWhenGracefulShutdown { await watch.run(onChange: onChange) }
    }
}
