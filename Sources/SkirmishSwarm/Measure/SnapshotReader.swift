import SkirmishTelemetry

/// Reads a run's figures from a merged snapshot, keeping to the legitimate personas when asked.
///
/// A rogue persona's traffic must never colour the figures a run is judged on, so totals for the summary are summed
/// over the legitimate personas only (`legit`), while `nil` reads everything.
struct SnapshotReader {
    let snapshot: MetricsSnapshot
    let legit: [String]?

    func total(_ family: MetricFamily, where filter: [String: String] = [:]) -> UInt64 {
        guard let legit else { return snapshot.counterTotal(family, where: filter) }
        return legit.reduce(0) { sum, persona in
            sum &+ snapshot.counterTotal(family, where: filter.merging(["persona": persona]) { $1 })
        }
    }

    /// The sum of a gauge family (bots connected, …) over the personas read.
    func gauge(_ family: MetricFamily) -> Double {
        guard let legit else { return snapshot.gaugeTotal(family) }
        return legit.reduce(0) { $0 + snapshot.gaugeTotal(family, where: ["persona": $1]) }
    }

    func breakdown(_ family: MetricFamily, by label: String, where filter: [String: String] = [:]) -> [String: UInt64] {
        guard let legit else { return snapshot.counterBreakdown(family, by: label, where: filter) }
        var result: [String: UInt64] = [:]
        for persona in legit {
            let part = snapshot.counterBreakdown(family, by: label, where: filter.merging(["persona": persona]) { $1 })
            for (key, value) in part { result[key, default: 0] &+= value }
        }
        return result
    }

    /// Latency samples come only from legitimate personas (rogue ones record none), so no filter is needed.
    func quantile(_ family: MetricFamily, _ q: Double, where filter: [String: String] = [:]) -> Double? {
        snapshot.histogramQuantile(family, q, where: filter)
    }

    func percentiles(_ family: MetricFamily, where filter: [String: String] = [:]) -> RunSummary.Percentiles {
        let distribution = snapshot.histogram(family, where: filter)
        return RunSummary.Percentiles(
            count: distribution?.count ?? 0, p50: distribution?.quantile(0.5), p95: distribution?.quantile(0.95),
            p99: distribution?.quantile(0.99), max: distribution?.quantile(1))
    }
}
