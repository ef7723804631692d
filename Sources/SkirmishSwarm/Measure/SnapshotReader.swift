import SkirmishScript
import SkirmishTelemetry

/// Reads a run's figures from a merged snapshot, keeping to the legitimate personas when asked.
///
/// A rogue persona's traffic must never colour the figures a run is judged on, so totals for the summary are summed
/// over the legitimate personas only (`legit`), while `nil` reads everything. A ``scope`` (a threshold's filter,
/// `{persona:chaser}`) narrows every read further to the series carrying those labels.
struct SnapshotReader {
    let snapshot: MetricsSnapshot
    let legit: [String]?
    /// Labels every series read must carry (`persona`, `game`); empty reads all.
    var scope: [String: String] = [:]

    init(snapshot: MetricsSnapshot, legit: [String]?, scope: [String: String] = [:]) {
        self.snapshot = snapshot
        self.legit = legit
        self.scope = scope
    }

    /// This reader narrowed to `threshold`'s filter. Every series of a run is of the script's one protocol, so a
    /// `protocol` filter (checked against the script when it loaded) narrows nothing.
    func scoped(to threshold: Threshold) -> SnapshotReader {
        guard !threshold.filter.isEmpty else { return self }
        return SnapshotReader(
            snapshot: snapshot, legit: legit, scope: threshold.filter.filter { $0.key != "protocol" })
    }

    /// The legitimate personas within the scope, or `nil` to read every persona.
    var personas: [String]? {
        guard let legit else { return nil }
        guard let only = scope["persona"] else { return legit }
        return legit.filter { $0 == only }
    }

    /// `filter` within the scope.
    private func within(_ filter: [String: String]) -> [String: String] {
        scope.isEmpty ? filter : scope.merging(filter) { $1 }
    }

    func total(_ family: MetricFamily, where filter: [String: String] = [:]) -> UInt64 {
        let filter = within(filter)
        guard let personas else { return snapshot.counterTotal(family, where: filter) }
        return personas.reduce(0) { sum, persona in
            sum &+ snapshot.counterTotal(family, where: filter.merging(["persona": persona]) { $1 })
        }
    }

    /// The sum of a gauge family (bots connected, …) over the personas read.
    func gauge(_ family: MetricFamily) -> Double {
        guard let personas else { return snapshot.gaugeTotal(family, where: scope) }
        return personas.reduce(0) { $0 + snapshot.gaugeTotal(family, where: within(["persona": $1])) }
    }

    func breakdown(_ family: MetricFamily, by label: String, where filter: [String: String] = [:]) -> [String: UInt64] {
        let filter = within(filter)
        guard let personas else { return snapshot.counterBreakdown(family, by: label, where: filter) }
        var result: [String: UInt64] = [:]
        for persona in personas {
            let part = snapshot.counterBreakdown(family, by: label, where: filter.merging(["persona": persona]) { $1 })
            for (key, value) in part { result[key, default: 0] &+= value }
        }
        return result
    }

    /// A distribution within the scope. Latency samples come only from legitimate personas (rogue ones record
    /// none), so no persona filter is needed beyond the scope's.
    func histogram(_ family: MetricFamily, where filter: [String: String] = [:]) -> HistogramValue? {
        snapshot.histogram(family, where: within(filter))
    }

    func quantile(_ family: MetricFamily, _ q: Double, where filter: [String: String] = [:]) -> Double? {
        snapshot.histogramQuantile(family, q, where: within(filter))
    }

    func percentiles(_ family: MetricFamily, where filter: [String: String] = [:]) -> RunSummary.Percentiles {
        let distribution = histogram(family, where: filter)
        return RunSummary.Percentiles(
            count: distribution?.count ?? 0, p50: distribution?.quantile(0.5), p95: distribution?.quantile(0.95),
            p99: distribution?.quantile(0.99), max: distribution?.quantile(1))
    }
}
