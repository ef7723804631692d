import ServiceLifecycle
import SkirmishTelemetry

/// The exporter's push loop as a ``Service``: starts pushing once what it pushes exists (``after``), and on a
/// graceful shutdown stops with a final push (blocking, on a thread of its own); when the group is cancelled it stops
/// without one.
package struct ExporterService: Service {
    package let exporter: Exporter
    /// What must have started before the first push (the embedded server whose series it carries).
    package var after: @Sendable () async throws -> Void = {}
    /// Told once the exporter runs, and after its final push.
    package var onStart: @Sendable () -> Void = {}
    package var onStop: @Sendable (ExporterStats) -> Void = { _ in }

    package init(_ exporter: Exporter) {
        self.exporter = exporter
    }

    package func run() async throws {
        try await after()
        exporter.start()
        onStart()
        let stopping = await Stopping.wait()
        let exporter = self.exporter
        await onOwnThread { exporter.stop(finalPush: stopping == .graceful) }
        if stopping == .graceful { onStop(exporter.stats) }
    }
}
