/// A counter series resolved in a ``MetricsShard``: adding to it is an array index.
public struct CounterID: Sendable, Hashable { let index: Int }
/// A gauge series resolved in a ``MetricsShard``.
public struct GaugeID: Sendable, Hashable { let index: Int }
/// A histogram series resolved in a ``MetricsShard``.
public struct HistogramID: Sendable, Hashable { let index: Int }

/// A family and the full label set of one series.
public struct SeriesKey: Sendable, Hashable {
    public let family: MetricFamily
    public let labels: Labels
}

/// The metrics of one event loop: resolved once, then updated with no lock and no allocation.
///
/// Not `Sendable`: it belongs to the loop that writes it. Readers (the exporter, the progress line, the summary)
/// take a ``snapshot(at:)`` on that loop and merge the snapshots of every loop.
public final class MetricsShard {
    public let constantLabels: Labels
    private var counterKeys: [SeriesKey] = []
    private var counterValues: [UInt64] = []
    private var gaugeKeys: [SeriesKey] = []
    private var gaugeValues: [Double] = []
    private var histogramKeys: [SeriesKey] = []
    private var histogramValues: [Distribution] = []
    private var lookup: [SeriesKey: Int] = [:]

    public init(constantLabels: Labels) {
        self.constantLabels = constantLabels
    }

    private func key(_ family: MetricFamily, _ labels: Labels) -> SeriesKey {
        var all: [String: String] = [:]
        for pair in constantLabels.pairs { all[pair.name] = pair.value }
        for pair in labels.pairs { all[pair.name] = pair.value }
        return SeriesKey(family: family, labels: Labels(all))
    }

    public func counter(_ family: MetricFamily, _ labels: Labels) -> CounterID {
        let key = key(family, labels)
        if let index = lookup[key] { return CounterID(index: index) }
        counterKeys.append(key)
        counterValues.append(0)
        lookup[key] = counterValues.count - 1
        return CounterID(index: counterValues.count - 1)
    }

    public func gauge(_ family: MetricFamily, _ labels: Labels) -> GaugeID {
        let key = key(family, labels)
        if let index = lookup[key] { return GaugeID(index: index) }
        gaugeKeys.append(key)
        gaugeValues.append(0)
        lookup[key] = gaugeValues.count - 1
        return GaugeID(index: gaugeValues.count - 1)
    }

    public func histogram(_ family: MetricFamily, _ labels: Labels) -> HistogramID {
        let key = key(family, labels)
        if let index = lookup[key] { return HistogramID(index: index) }
        guard case .histogram(let unit) = family.kind else {
            preconditionFailure("\(family.name) is not a histogram family")
        }
        histogramKeys.append(key)
        histogramValues.append(Distribution(unit: unit))
        lookup[key] = histogramValues.count - 1
        return HistogramID(index: histogramValues.count - 1)
    }

    @inline(__always) public func add(_ id: CounterID, _ amount: UInt64 = 1) {
        counterValues[id.index] &+= amount
    }

    @inline(__always) public func set(_ id: GaugeID, _ value: Double) { gaugeValues[id.index] = value }

    @inline(__always) public func add(_ id: GaugeID, _ delta: Double) { gaugeValues[id.index] += delta }

    /// Records a duration in seconds (or any value in the family's exported unit).
    @inline(__always) public func record(_ id: HistogramID, seconds: Double) {
        histogramValues[id.index].record(seconds)
    }

    /// Records a value in the family's exported unit (pixels for prediction errors).
    @inline(__always) public func record(_ id: HistogramID, value: Double) {
        histogramValues[id.index].record(value)
    }

    /// A copy of every series, stamped with `milliseconds` since the Unix epoch.
    public func snapshot(at milliseconds: Int64) -> MetricsSnapshot {
        var snapshot = MetricsSnapshot(timestampMilliseconds: milliseconds)
        for (key, value) in zip(counterKeys, counterValues) { snapshot.counters[key, default: 0] &+= value }
        for (key, value) in zip(gaugeKeys, gaugeValues) { snapshot.gauges[key, default: 0] += value }
        for (key, value) in zip(histogramKeys, histogramValues) {
            if snapshot.histograms[key] == nil {
                snapshot.histograms[key] = value
            } else {
                snapshot.histograms[key]!.merge(value)
            }
        }
        return snapshot
    }
}
