import SkirmishTelemetry
import Synchronization

/// The run's metrics: the swarm's merged with the embedded server's, so one push or scrape carries both. Parts join as
/// they start; a collect before then carries what exists.
package final class RunMetrics: MetricsSource {
    private let parts = Mutex<[any MetricsSource]>([])

    package init() {}

    package func add(_ source: any MetricsSource) {
        parts.withLock { $0.append(source) }
    }

    package func collect() -> MetricsSnapshot {
        var merged = MetricsSnapshot()
        for part in parts.withLock({ $0 }) { merged.merge(part.collect()) }
        return merged
    }
}
