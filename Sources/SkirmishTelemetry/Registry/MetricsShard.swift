/// The handle of a counter series in one ``MetricsShard``; resolve once, keep it, add through it.
public struct CounterID: Sendable, Hashable {
    let index: Int
}

/// The handle of a gauge series in one ``MetricsShard``.
public struct GaugeID: Sendable, Hashable {
    let index: Int
}

/// The handle of a histogram series in one ``MetricsShard``.
public struct HistogramID: Sendable, Hashable {
    let index: Int
}

/// The metrics of one event loop: plain arrays indexed by resolved ids, so updating one takes no lock.
///
/// Create one per event loop and use it only from that loop: it is deliberately not `Sendable`. Resolving a
/// series (``counter(_:_:)`` and friends) hashes its labels and may allocate, so do it when a bot or match starts
/// and keep the id; `add`, ``set(_:_:)`` and ``record(_:seconds:)`` are an index and an add.
/// ``snapshot(at:)`` copies everything for the exporter, which merges the shards' snapshots off the loop.
public final class MetricsShard {
    /// Labels put first on every series (`run`, `shard`).
    public let constantLabels: Labels
    /// Wall-clock time the counters started from, in milliseconds since 1970 (0 when unknown).
    public let startTimeMs: Int64

    // Written on every packet, only by the shard's own loop and never re-entered while an update runs, so their
    // exclusivity is not checked at run time (a thread-local access set per update, measured as several percent of a
    // swarm's CPU).
    @exclusivity(unchecked) private var counters: [UInt64] = []
    @exclusivity(unchecked) private var gauges: [Double] = []
    @exclusivity(unchecked) private var histograms: [HistogramValue] = []
    private var counterSeries: [(MetricFamily, Labels)] = []
    private var gaugeSeries: [(MetricFamily, Labels)] = []
    private var histogramSeries: [(MetricFamily, Labels)] = []
    /// Series created with `visibleAtZero: false`, left out of snapshots until they hold a value: a figure a
    /// protocol cannot measure is absent, never a misleading 0.
    private var counterHidden: [Bool] = []
    private var histogramHidden: [Bool] = []
    private var counterIDs: [SeriesKey: Int] = [:]
    private var gaugeIDs: [SeriesKey: Int] = [:]
    private var histogramIDs: [SeriesKey: Int] = [:]

    /// A shard whose series all start with `constantLabels`.
    public init(constantLabels: Labels, startTimeMs: Int64 = 0) {
        self.constantLabels = constantLabels
        self.startTimeMs = startTimeMs
    }

    /// Resolves (creating when new) a counter series; labels are put in the family's order. One resolved with
    /// `visibleAtZero: false` is left out of snapshots while it is 0 (resolving it again visibly shows it).
    public func counter(_ family: MetricFamily, _ labels: Labels = Labels(), visibleAtZero: Bool = true) -> CounterID {
        let index = resolve(family, labels, in: &counterSeries, ids: &counterIDs) {
            counters.append(0)
            counterHidden.append(!visibleAtZero)
        }
        if visibleAtZero { counterHidden[index] = false }
        return CounterID(index: index)
    }

    /// Resolves (creating when new) a gauge series.
    public func gauge(_ family: MetricFamily, _ labels: Labels = Labels()) -> GaugeID {
        GaugeID(index: resolve(family, labels, in: &gaugeSeries, ids: &gaugeIDs) { gauges.append(0) })
    }

    /// Resolves (creating when new) a histogram series; a family that is not a histogram uses the seconds scale.
    /// One resolved with `visibleAtZero: false` is left out of snapshots until it holds a sample.
    public func histogram(_ family: MetricFamily, _ labels: Labels = Labels(), visibleAtZero: Bool = true)
        -> HistogramID
    {
        let scale: HistogramScale
        if case .histogram(let familyScale) = family.kind { scale = familyScale } else { scale = .seconds }
        let index = resolve(family, labels, in: &histogramSeries, ids: &histogramIDs) {
            histograms.append(HistogramValue(scale: scale))
            histogramHidden.append(!visibleAtZero)
        }
        if visibleAtZero { histogramHidden[index] = false }
        return HistogramID(index: index)
    }

    /// Adds to a counter.
    @inline(__always)
    public func add(_ id: CounterID, _ value: UInt64 = 1) {
        counters[id.index] &+= value
    }

    /// Sets a gauge.
    @inline(__always)
    public func set(_ id: GaugeID, _ value: Double) {
        gauges[id.index] = value
    }

    /// Adds to (or, with a negative delta, subtracts from) a gauge.
    @inline(__always)
    public func add(_ id: GaugeID, _ delta: Double) {
        gauges[id.index] += delta
    }

    /// Records a duration in seconds.
    @inline(__always)
    public func record(_ id: HistogramID, seconds: Double) {
        histograms[id.index].record(seconds)
    }

    /// Records a value in the family's unit (pixels for the prediction error).
    @inline(__always)
    public func record(_ id: HistogramID, value: Double) {
        histograms[id.index].record(value)
    }

    /// The current value of a counter (for tests and the live progress line).
    public func value(_ id: CounterID) -> UInt64 { counters[id.index] }

    /// The current value of a gauge.
    public func value(_ id: GaugeID) -> Double { gauges[id.index] }

    /// A copy of every series, stamped with a wall-clock time in milliseconds since 1970.
    public func snapshot(at timestampMs: Int64) -> MetricsSnapshot {
        var snapshot = MetricsSnapshot(timestampMs: timestampMs, startTimeMs: startTimeMs)
        for (slot, (family, labels)) in counterSeries.enumerated() where !counterHidden[slot] || counters[slot] > 0 {
            snapshot.insert(MetricSeries(family: family, labels: labels, value: .counter(counters[slot])))
        }
        for (slot, (family, labels)) in gaugeSeries.enumerated() {
            snapshot.insert(MetricSeries(family: family, labels: labels, value: .gauge(gauges[slot])))
        }
        for (slot, (family, labels)) in histogramSeries.enumerated()
        where !histogramHidden[slot] || histograms[slot].count > 0 {
            var copy = histograms[slot]
            copy.detachStorage()
            snapshot.insert(MetricSeries(family: family, labels: labels, value: .histogram(copy)))
        }
        return snapshot
    }

    private func resolve(
        _ family: MetricFamily,
        _ labels: Labels,
        in table: inout [(MetricFamily, Labels)],
        ids: inout [SeriesKey: Int],
        create: () -> Void
    ) -> Int {
        let full = constantLabels.appending(labels.conformed(to: family.labelNames))
        let key = SeriesKey(name: family.name, labels: full)
        if let existing = ids[key] { return existing }
        let slot = table.count
        table.append((family, full))
        create()
        ids[key] = slot
        return slot
    }
}

@available(*, unavailable, message: "A MetricsShard belongs to one event loop; send its snapshot(at:) instead.")
extension MetricsShard: Sendable {}
