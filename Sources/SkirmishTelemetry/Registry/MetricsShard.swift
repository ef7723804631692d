import Synchronization

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
///
/// A read takes two steps, so that the loop never stops for long: ``handOff(at:)``, on the loop, copies the counters
/// and gauges and swaps each histogram recorded since the last hand-off for an empty one (a few hundred bytes moved,
/// however large the histograms); ``MetricsHandOff/snapshot()``, on any thread, adds those histograms to the shard's
/// totals and copies everything out. The loop's part took 8–12 µs for a loop of 1,500 bots; the copy it replaces
/// grew with every histogram's HDR counts (tens of thousands each), however few values were new.
/// ``snapshot(at:)`` does both steps at once, for code that reads where it records.
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

    /// How many series the shard holds (hidden ones included): what its snapshots may grow to.
    public var seriesCount: Int { counterSeries.count + gaugeSeries.count + histogramSeries.count }

    /// The labels a script's persona `tags` add to every bot family's series, in this order.
    public let tagNames: [String]

    /// A shard whose series all start with `constantLabels`; the series of bot families (those labelled by game
    /// and persona) also carry `tagNames` after the family's own labels (empty for a persona without that tag).
    public init(constantLabels: Labels, startTimeMs: Int64 = 0, tagNames: [String] = []) {
        self.constantLabels = constantLabels
        self.startTimeMs = startTimeMs
        self.tagNames = tagNames.map(MetricName.sanitiseLabel)
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
        let index = resolve(family, labels, in: &histogramSeries, ids: &histogramIDs) {
            histograms.append(HistogramValue(scale: family.histogramScale))
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

    /// A copy of every series, stamped with a wall-clock time in milliseconds since 1970: ``handOff(at:)`` and its
    /// ``MetricsHandOff/snapshot()`` in one call, so all of its cost falls where it is called.
    public func snapshot(at timestampMs: Int64) -> MetricsSnapshot {
        handOff(at: timestampMs).snapshot()
    }

    /// The loop's part of a read, cheap whatever the histograms hold: the counters and gauges as they are, and each
    /// histogram recorded since the last hand-off, swapped for an emptied one a reader left for it (made new only
    /// while there is none, as at a loop's first reads). Call on the shard's loop; finish the read anywhere with
    /// ``MetricsHandOff/snapshot()``. A hand-off dropped unfinished still adds its histograms to the totals.
    public func handOff(at timestampMs: Int64) -> MetricsHandOff {
        var recorded: [(slot: Int, histogram: HistogramValue)] = []
        recorded.reserveCapacity(histograms.count)
        totals.withSpares { spares in
            for slot in histograms.indices where histograms[slot].count > 0 {
                var empty = spares.take(slot: slot) ?? HistogramValue(scale: histograms[slot].scale)
                // The running sum stays on the loop, added to in the order values came; the totals take it as it is,
                // so a sum read in parts is the same to the last bit as one read whole.
                empty.sum = histograms[slot].sum
                swap(&histograms[slot], &empty)
                recorded.append((slot, empty))
            }
        }
        // Copies, not shared buffers: the loop's next add would otherwise copy the whole array on the hot path. (The
        // series tables are shared: they change only when a series is resolved, never per packet.)
        return MetricsHandOff(
            timestampMs: timestampMs, startTimeMs: startTimeMs,
            counters: counters.withUnsafeBufferPointer { Array($0) }, counterSeries: counterSeries,
            counterHidden: counterHidden, gauges: gauges.withUnsafeBufferPointer { Array($0) },
            gaugeSeries: gaugeSeries,
            histogramHidden: histogramHidden,
            recorded: RecordedHistograms(recorded, series: histogramSeries, totals: totals))
    }

    /// The histograms' totals, kept by the readers off the loop (see ``handOff(at:)``).
    private let totals = HistogramTotals()

    private func resolve(
        _ family: MetricFamily,
        _ labels: Labels,
        in table: inout [(MetricFamily, Labels)],
        ids: inout [SeriesKey: Int],
        create: () -> Void
    ) -> Int {
        let names =
            tagNames.isEmpty || !family.labelNames.starts(with: SkirmishMetrics.botLabels)
            ? family.labelNames : family.labelNames + tagNames
        let full = constantLabels.appending(labels.conformed(to: names))
        let key = SeriesKey(name: family.name, labels: full)
        if let existing = ids[key] { return existing }
        let slot = table.count
        table.append((family, full))
        create()
        ids[key] = slot
        return slot
    }
}

extension MetricFamily {
    /// The scale a series of this family records on: its own for a histogram family, seconds for any other.
    var histogramScale: HistogramScale {
        if case .histogram(let scale) = kind { scale } else { .seconds }
    }
}

@available(*, unavailable, message: "A MetricsShard belongs to one event loop; send its handOff(at:) instead.")
extension MetricsShard: Sendable {}

/// One read of a ``MetricsShard``, handed off its loop: finish it with ``snapshot()`` on any thread.
public struct MetricsHandOff: Sendable {
    let timestampMs: Int64
    let startTimeMs: Int64
    let counters: [UInt64]
    let counterSeries: [(MetricFamily, Labels)]
    let counterHidden: [Bool]
    let gauges: [Double]
    let gaugeSeries: [(MetricFamily, Labels)]
    let histogramHidden: [Bool]
    let recorded: RecordedHistograms

    /// Every series, cumulative since the shard started. The histograms of this hand-off are added to the shard's
    /// totals (once, however often this is called), then everything is copied out.
    ///
    /// Reads may be handed off and finished in any order: a snapshot holds everything of every hand-off finished
    /// before it, so the snapshots of one reader never go back. Its counters and gauges are those of its hand-off,
    /// its histograms those of every hand-off finished so far, and a histogram's sum the newest of those: when two
    /// reads overlap, the one finished first may show a histogram a little ahead of its counters.
    public func snapshot() -> MetricsSnapshot {
        let histograms = recorded.addToTotals()
        var snapshot = MetricsSnapshot(timestampMs: timestampMs, startTimeMs: startTimeMs)
        for (slot, (family, labels)) in counterSeries.enumerated() where !counterHidden[slot] || counters[slot] > 0 {
            snapshot.insert(MetricSeries(family: family, labels: labels, value: .counter(counters[slot])))
        }
        for (slot, (family, labels)) in gaugeSeries.enumerated() {
            snapshot.insert(MetricSeries(family: family, labels: labels, value: .gauge(gauges[slot])))
        }
        for (slot, (family, labels)) in recorded.series.enumerated()
        where !histogramHidden[slot] || histograms[slot].count > 0 {
            snapshot.insert(MetricSeries(family: family, labels: labels, value: .histogram(histograms[slot])))
        }
        return snapshot
    }
}

/// The histograms one hand-off took from its loop, added to the shard's totals exactly once: by the first
/// ``MetricsHandOff/snapshot()`` of it, or when the last copy of an unfinished hand-off goes.
final class RecordedHistograms: Sendable {
    let series: [(MetricFamily, Labels)]
    private let totals: HistogramTotals
    private let pending: Mutex<[(slot: Int, histogram: HistogramValue)]?>

    init(
        _ recorded: [(slot: Int, histogram: HistogramValue)], series: [(MetricFamily, Labels)], totals: HistogramTotals
    ) {
        self.series = series
        self.totals = totals
        pending = Mutex(recorded)
    }

    deinit {
        // Only an unfinished hand-off has anything left to add (it may be released on the loop: nothing else here).
        var taken = pending.withLock { $0.take() } ?? []
        if !taken.isEmpty { _ = totals.add(&taken, series: series) }
    }

    /// Adds the histograms to the totals if nobody has yet; returns the totals of every series.
    func addToTotals() -> [HistogramValue] {
        var taken = pending.withLock { $0.take() } ?? []
        return totals.add(&taken, series: series)
    }
}

/// A shard's histograms as totals since it started, and emptied histograms waiting for the loop to swap in.
///
/// Two locks, so the loop never waits for a reader's work: the loop takes only the spares' lock, for a pop per
/// recorded series; the totals' lock, held while a reader adds a hand-off (a pass over every HDR count), is the
/// readers' alone.
final class HistogramTotals: Sendable {
    struct Spares {
        /// Emptied histograms by slot, at most ``limit`` each: a burst of readers leaves no pile behind.
        var bySlot: [[HistogramValue]] = []
        /// Two: the progress line and the exporter read at the same moment every so often.
        static let limit = 2

        mutating func take(slot: Int) -> HistogramValue? {
            slot < bySlot.count ? bySlot[slot].popLast() : nil
        }
    }

    private let totals = Mutex([HistogramValue]())
    private let spares = Mutex(Spares())

    /// Runs `body` with the spares, under their lock (on the loop: keep it short).
    func withSpares<R>(_ body: (inout Spares) -> R) -> R {
        spares.withLock { body(&$0) }
    }

    /// Adds `recorded` to the totals and moves its histograms, emptied, to the spares for the loop's next hand-offs
    /// (`recorded` is left empty); returns the totals of every series in `series`.
    func add(_ recorded: inout [(slot: Int, histogram: HistogramValue)], series: [(MetricFamily, Labels)])
        -> [HistogramValue]
    {
        let current = totals.withLock { totals -> [HistogramValue] in
            for (family, _) in series.dropFirst(totals.count) {
                totals.append(HistogramValue(scale: family.histogramScale))
            }
            for (slot, histogram) in recorded where slot < totals.count {
                totals[slot].add(histogram)
            }
            return totals
        }
        guard !recorded.isEmpty else { return current }
        // Emptied in place (a pass over every count): each is its storage's only owner, so the loop records into it
        // without a copy. A series that records gets its spares made here, off the loop, where fewer came back.
        for index in recorded.indices { recorded[index].histogram.reset() }
        let slots = recorded.map(\.slot)
        let missing = spares.withLock { spares -> [Int] in
            while let (slot, histogram) = recorded.popLast() {
                while spares.bySlot.count <= slot { spares.bySlot.append([]) }
                if spares.bySlot[slot].count < Spares.limit { spares.bySlot[slot].append(histogram) }
            }
            return slots.flatMap { Array(repeating: $0, count: Spares.limit - spares.bySlot[$0].count) }
        }
        guard !missing.isEmpty else { return current }
        let made = missing.map { (slot: $0, histogram: HistogramValue(scale: current[$0].scale)) }
        spares.withLock { spares in
            for (slot, histogram) in made where spares.bySlot[slot].count < Spares.limit {
                spares.bySlot[slot].append(histogram)
            }
        }
        return current
    }
}
