import Foundation
import SkirmishTelemetry
import Synchronization

/// Snapshots built the way the swarm builds them: one shard per loop, series resolved once.
enum Fixtures {
    static let startMs: Int64 = 1_763_856_000_000

    /// A shard with a few known values in every kind of family.
    static func shard(run: String = "t1", shard: String = "0", scale: UInt64 = 1) -> MetricsShard {
        let metrics = MetricsShard(constantLabels: ["run": run, "shard": shard], startTimeMs: startMs)
        let chaser: Labels = ["game": "puck", "persona": "chaser"]
        var sent = chaser
        sent["type"] = "paddle_state"
        sent["delivery"] = "unreliable"
        metrics.add(metrics.counter(SkirmishMetrics.packetsSent, sent), 1_000 * scale)
        metrics.add(metrics.counter(SkirmishMetrics.bytesSent, chaser), 48_000 * scale)
        var desync = chaser
        desync["part"] = "puck"
        metrics.add(metrics.counter(SkirmishMetrics.desyncs, desync), 2 * scale)
        metrics.set(metrics.gauge(SkirmishMetrics.botsConnected, chaser), 25)
        let rtt = metrics.histogram(SkirmishMetrics.rtt, chaser)
        for step in 0..<(100 * Int(scale)) { metrics.record(rtt, seconds: 0.010 + Double(step % 100) * 0.0004) }
        return metrics
    }

    /// Every family of ``SkirmishMetrics`` not set by ``shard(run:shard:scale:)`` gets a non-zero value too, so
    /// every dashboard panel has data.
    static func fillEverything(_ metrics: MetricsShard, scale: UInt64) {
        let already = [
            SkirmishMetrics.packetsSent, SkirmishMetrics.bytesSent, SkirmishMetrics.desyncs,
            SkirmishMetrics.botsConnected, SkirmishMetrics.rtt,
        ].map(\.name)
        for family in SkirmishMetrics.all where !already.contains(family.name) {
            var labels = Labels()
            for name in family.labelNames {
                labels[name] =
                    ["game": "puck", "persona": "chaser", "type": "pong", "reason": "rate_limited"][name]
                    ?? "x"
            }
            switch family.kind {
            case .counter:
                metrics.add(metrics.counter(family, labels), 100 * scale)
            case .gauge:
                metrics.set(metrics.gauge(family, labels), 5)
            case .histogram:
                let id = metrics.histogram(family, labels)
                for step in 0..<(50 * Int(scale)) { metrics.record(id, value: 0.002 * Double(1 + step % 10)) }
            }
        }
    }

    static func snapshot(scale: UInt64 = 1, at ms: Int64 = startMs + 5_000) -> MetricsSnapshot {
        shard(scale: scale).snapshot(at: ms)
    }
}

/// A run whose totals the test controls: each collection reports `scale` × the fixture's values, stamped now.
final class RunSource: MetricsSource {
    let runID: String
    private let scale = Mutex<UInt64>(1)
    private let collections = Mutex<Int>(0)
    private let everything: Bool

    /// A run; with `everything`, every family of ``SkirmishMetrics`` has data (for dashboard queries).
    init(runID: String = "t-" + UUID().uuidString.prefix(8).lowercased(), everything: Bool = false) {
        self.runID = runID
        self.everything = everything
    }

    private let offsetMs = Mutex<Int64>(0)

    /// Stamps later collections `ms` milliseconds away from now (negative: in the past).
    func set(offsetMs value: Int64) {
        offsetMs.withLock { $0 = value }
    }

    func set(scale value: UInt64) {
        scale.withLock { $0 = value }
    }

    var collected: Int { collections.withLock { $0 } }

    func collect() -> MetricsSnapshot {
        collections.withLock { $0 += 1 }
        let now = Int64(Date().timeIntervalSince1970 * 1_000) + offsetMs.withLock { $0 }
        let factor = scale.withLock { $0 }
        let metrics = Fixtures.shard(run: runID, scale: factor)
        if everything { Fixtures.fillEverything(metrics, scale: factor) }
        return metrics.snapshot(at: now)
    }

    /// An exporter for this run that pushes only when asked (the interval is longer than any test).
    func exporter(
        _ targets: [PushTarget],
        configuration: ExporterConfiguration = ExporterConfiguration(backoffBase: .milliseconds(50))
    ) -> Exporter {
        Exporter(
            targets: targets, source: self, interval: .seconds(3_600), runID: runID, shard: "0",
            configuration: configuration)
    }
}
