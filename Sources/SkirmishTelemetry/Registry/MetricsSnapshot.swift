/// Every series of one or more shards at one moment: what the renderers, the summary and the report read.
public struct MetricsSnapshot: Sendable {
    public var timestampMilliseconds: Int64
    public var counters: [SeriesKey: UInt64] = [:]
    public var gauges: [SeriesKey: Double] = [:]
    public var histograms: [SeriesKey: Distribution] = [:]

    public init(timestampMilliseconds: Int64 = 0) {
        self.timestampMilliseconds = timestampMilliseconds
    }

    /// Adds `other`'s series to these: counters and gauges sum (each loop counts its own bots), histograms merge.
    public mutating func merge(_ other: MetricsSnapshot) {
        timestampMilliseconds = max(timestampMilliseconds, other.timestampMilliseconds)
        for (key, value) in other.counters { counters[key, default: 0] &+= value }
        for (key, value) in other.gauges { gauges[key, default: 0] += value }
        for (key, value) in other.histograms {
            if histograms[key] == nil { histograms[key] = value } else { histograms[key]!.merge(value) }
        }
    }

    /// The sum of a counter family's series whose labels match `filter`.
    public func counterTotal(_ family: MetricFamily, where filter: [String: String] = [:]) -> UInt64 {
        counters.reduce(0) { total, entry in
            entry.key.family == family && entry.key.labels.matches(filter) ? total &+ entry.value : total
        }
    }

    /// The sum of a gauge family's series whose labels match `filter`.
    public func gaugeTotal(_ family: MetricFamily, where filter: [String: String] = [:]) -> Double {
        gauges.reduce(0) { total, entry in
            entry.key.family == family && entry.key.labels.matches(filter) ? total + entry.value : total
        }
    }

    /// The merged distribution of a histogram family's series whose labels match `filter`.
    public func distribution(_ family: MetricFamily, where filter: [String: String] = [:]) -> Distribution? {
        var merged: Distribution?
        for (key, value) in histograms where key.family == family && key.labels.matches(filter) {
            if merged == nil { merged = value } else { merged!.merge(value) }
        }
        return merged
    }

    /// The value at quantile `q` of the merged matching series, in the family's exported unit.
    public func histogramQuantile(_ family: MetricFamily, _ q: Double, where filter: [String: String] = [:])
        -> Double?
    {
        distribution(family, where: filter)?.quantile(q)
    }

    /// A counter family's totals grouped by the value of `label`.
    public func counterBreakdown(
        _ family: MetricFamily, by label: String, where filter: [String: String] = [:]
    ) -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        for (key, value) in counters where key.family == family && key.labels.matches(filter) && value > 0 {
            result[key.labels[label] ?? "", default: 0] &+= value
        }
        return result
    }

    /// How many series the snapshot holds.
    public var seriesCount: Int { counters.count + gauges.count + histograms.count }
}

/// Where the exporter reads metrics from; may block (it is called on the exporter's own thread only).
public protocol MetricsSource: Sendable {
    func collect() -> MetricsSnapshot
}
