import SkirmishScript
import SkirmishTelemetry

extension Catalogue {
    /// The most series a run's bots may create in one process: every persona's counters, gauges and histograms,
    /// with the tag labels its personas carry. Well above any shipped script (quickstart plans under 700), far
    /// below what makes a push or a scrape slow.
    public static let maxSeries = 25_000

    /// How many series `script`'s personas create before any rarer one appears (an unexpected packet kind, an
    /// error kind first seen mid-run): what a collector receives from each process of the run.
    public func plannedSeries(of script: Script) -> Int {
        let shard = MetricsShard(constantLabels: ["run": "plan", "shard": "0"], tagNames: script.tagNames)
        for persona in script.personas {
            _ = Meters(
                shard: shard, spec: persona,
                plan: Meters.Plan(of: persona, in: self, protocolName: script.protocolName))
        }
        return shard.seriesCount
    }
}
