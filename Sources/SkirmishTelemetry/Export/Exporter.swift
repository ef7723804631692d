import Foundation
import Logging

/// Pushes merged snapshots to collectors on its own threads: periodically, on demand, and once more at shutdown.
///
/// One ticker thread collects from the ``MetricsSource`` and renders a payload per target; one worker thread per
/// target sends them with libcurl. Nothing here runs on an event loop or the cooperative pool, so a slow or dead
/// collector never delays a tick. Each target's queue is bounded; values are cumulative, so when a push fails and
/// a newer payload is waiting the older one is dropped: the newer carries every total. The latest payload is
/// retried with capped exponential backoff and jitter until it lands or a newer one replaces it.
public final class Exporter: Sendable {
    private let core: ExporterCore

    /// An exporter that has not started yet.
    ///
    /// - Parameters:
    ///   - targets: where to push; with none, the exporter only collects (for its stats) and sends nothing.
    ///   - source: what to push; called on the exporter's thread.
    ///   - interval: time between pushes.
    ///   - runID: the run's id, used in the Pushgateway grouping key and the exporter's own series.
    ///   - shard: the shard index as text (`0` for a single process).
    ///   - configuration: queue size, retry backoff and how long the final push may take.
    ///   - logger: receives start and stop, and each collector outage: a warning when pushes to a target start
    ///     failing, an info line when one lands again (how long it lasted, how many points were collected meanwhile).
    ///     Lines carry `run` and `shard` unless the logger already has them.
    public init(
        targets: [PushTarget],
        source: any MetricsSource,
        interval: Duration = .seconds(5),
        runID: String,
        shard: String,
        configuration: ExporterConfiguration = ExporterConfiguration(),
        logger: Logger = Logger(label: "skirmish.exporter")
    ) {
        core = ExporterCore(
            targets: targets, source: source, interval: interval, runID: runID, shard: shard,
            configuration: configuration, logger: logger)
    }

    /// Starts the ticker and worker threads; returns at once. Calling it again does nothing.
    public func start() {
        core.start()
    }

    /// Asks for a push now instead of at the next interval; returns at once.
    public func pushNow() {
        core.requestCollection()
    }

    /// Stops the exporter, first delivering a final push unless `finalPush` is false.
    ///
    /// Blocks until the final push landed everywhere or ``ExporterConfiguration/finalPushTimeout`` (plus one
    /// request timeout) passed: call it from the shutdown path, never from an event loop.
    public func stop(finalPush: Bool = true) {
        core.stop(finalPush: finalPush)
    }

    /// Pushes and failures so far.
    public var stats: ExporterStats {
        core.currentStats()
    }

    /// Waits until `condition` holds for the stats or `timeout` passes; returns whether it held.
    ///
    /// For tests and for tools that must know a push landed; it wakes on every change, no polling.
    public func waitForStats(timeout: Duration, until condition: (ExporterStats) -> Bool) -> Bool {
        core.waitForStats(timeout: timeout, until: condition)
    }
}
