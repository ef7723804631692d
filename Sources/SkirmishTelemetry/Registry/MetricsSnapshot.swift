/// A copy of every series at one moment, safe to send to the exporter thread and to merge.
///
/// Each event loop's ``MetricsShard`` produces one; the exporter (or the end-of-run summary) merges them, so
/// the hot path never shares memory. Counters and histograms are cumulative since the shard started, which is what
/// makes a lost push lose nothing: the next one carries the totals.
public struct MetricsSnapshot: Sendable {
    /// Wall-clock time of the snapshot, in milliseconds since 1970.
    public var timestampMs: Int64
    /// Wall-clock time the counters started from (0 when unknown), in milliseconds since 1970.
    public var startTimeMs: Int64
    /// The series, in first-registered order.
    public private(set) var series: [MetricSeries]
    private var index: [SeriesKey: Int]

    /// An empty snapshot at a time.
    public init(timestampMs: Int64 = 0, startTimeMs: Int64 = 0) {
        self.timestampMs = timestampMs
        self.startTimeMs = startTimeMs
        self.series = []
        self.index = [:]
    }

    /// Adds a series, or merges it into the series with the same family name and labels.
    ///
    /// Counters, gauges and histograms add up (gauges of one process are per-loop parts of one quantity). A
    /// series whose kind differs from the existing one is ignored: a name means one kind.
    public mutating func insert(_ new: MetricSeries) {
        guard let position = index[new.key] else {
            index[new.key] = series.count
            series.append(new)
            return
        }
        switch (series[position].value, new.value) {
        case (.counter(let a), .counter(let b)):
            series[position].value = .counter(a &+ b)
        case (.gauge(let a), .gauge(let b)):
            series[position].value = .gauge(a + b)
        case (.histogram(var a), .histogram(let b)):
            a.merge(b)
            series[position].value = .histogram(a)
        default:
            break
        }
    }

    /// Merges every series of `other` into this one; the later timestamp and the earlier known start win.
    public mutating func merge(_ other: MetricsSnapshot) {
        timestampMs = max(timestampMs, other.timestampMs)
        if other.startTimeMs != 0 {
            startTimeMs = startTimeMs == 0 ? other.startTimeMs : min(startTimeMs, other.startTimeMs)
        }
        for item in other.series { insert(item) }
    }

    /// The series grouped by family, families in first-seen order (line formats need each family contiguous).
    public var families: [(family: MetricFamily, series: [MetricSeries])] {
        var order: [String: Int] = [:]
        var groups: [(family: MetricFamily, series: [MetricSeries])] = []
        for item in series {
            if let slot = order[item.family.name] {
                groups[slot].series.append(item)
            } else {
                order[item.family.name] = groups.count
                groups.append((item.family, [item]))
            }
        }
        return groups
    }

    /// The series of `family` whose labels include every pair of `filter`.
    public func series(of family: MetricFamily, where filter: [String: String] = [:]) -> [MetricSeries] {
        series.filter { $0.family.name == family.name && $0.labels.matches(filter) }
    }

    /// The sum of a counter family over the matching series.
    public func counterTotal(_ family: MetricFamily, where filter: [String: String] = [:]) -> UInt64 {
        series(of: family, where: filter).reduce(0) { total, item in
            if case .counter(let value) = item.value { return total &+ value }
            return total
        }
    }

    /// The sum of a gauge family over the matching series.
    public func gaugeTotal(_ family: MetricFamily, where filter: [String: String] = [:]) -> Double {
        series(of: family, where: filter).reduce(0) { total, item in
            if case .gauge(let value) = item.value { return total + value }
            return total
        }
    }

    /// The merged distribution of a histogram family over the matching series, or `nil` when there is none.
    public func histogram(_ family: MetricFamily, where filter: [String: String] = [:]) -> HistogramValue? {
        var merged: HistogramValue?
        for item in series(of: family, where: filter) {
            guard case .histogram(let value) = item.value else { continue }
            if merged == nil { merged = value } else { merged?.merge(value) }
        }
        return merged
    }

    /// The value at quantile `q` (0…1) of the merged matching series, or `nil` when nothing was recorded.
    public func histogramQuantile(
        _ family: MetricFamily, _ q: Double, where filter: [String: String] = [:]
    ) -> Double? {
        histogram(family, where: filter)?.quantile(q)
    }
}
