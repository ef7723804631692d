import Histogram

/// One series of a snapshot: a family, its full labels and its value at the snapshot's time.
public struct MetricSeries: Sendable {
    /// The value of a series, by family kind.
    public enum Value: Sendable {
        /// A cumulative count.
        case counter(UInt64)
        /// The current value.
        case gauge(Double)
        /// The distribution so far.
        case histogram(HistogramValue)
    }

    /// The family the series belongs to.
    public let family: MetricFamily
    /// Constant labels first, then the family's labels in its order.
    public let labels: Labels
    /// The value.
    public internal(set) var value: Value

    /// A series with a value; used by sources that do not own a ``MetricsShard``.
    public init(family: MetricFamily, labels: Labels, value: Value) {
        self.family = family
        self.labels = labels
        self.value = value
    }

    var key: SeriesKey { SeriesKey(name: family.name, labels: labels) }
}

/// Identity of a series inside a snapshot or a shard.
struct SeriesKey: Hashable {
    let name: String
    let labels: Labels
}

/// A distribution: the HDR histogram for quantiles, the exact sum for `_sum`, and the scale for export buckets.
public struct HistogramValue: Sendable {
    /// The recorded values, in units of `scale.resolution`.
    var hdr: Histogram<UInt64>
    /// The exact sum of recorded values, in exported units.
    public internal(set) var sum: Double
    /// How values were scaled, and the exported bucket bounds.
    public let scale: HistogramScale
    /// Values per exported bucket (not cumulative): slot `i` counts values in (bounds[i-1], bounds[i]], the last
    /// slot those above every bound. Kept beside the HDR counts so an export reads a handful of numbers instead of
    /// walking tens of thousands of HDR buckets per series.
    var buckets: [UInt64]

    /// An empty distribution for `scale`.
    public init(scale: HistogramScale) {
        self.scale = scale
        self.sum = 0
        self.buckets = [UInt64](repeating: 0, count: scale.bounds.count + 1)
        self.hdr = Histogram<UInt64>(
            lowestDiscernibleValue: 1,
            highestTrackableValue: UInt64(max(2, scale.highest * scale.resolution)),
            numberOfSignificantValueDigits: .three
        )
    }

    /// How many values were recorded.
    public var count: UInt64 { hdr.totalCount }

    /// Records one value in exported units; NaN is ignored, negatives count as 0, large values clamp to the top.
    public mutating func record(_ value: Double) {
        guard !value.isNaN else { return }
        let clamped = min(max(value, 0), scale.highest)
        let units = UInt64(clamped * scale.resolution)
        _ = hdr.record(min(units, hdr.highestTrackableValue))
        sum += clamped
        buckets[scale.bucket(of: clamped)] &+= 1
    }

    /// Adds the counts of `other`, a part of this series recorded later (a shard's hand-off), and takes its running
    /// sum, which already includes everything this one holds: sums stay exactly as recorded, in recording order.
    mutating func add(_ other: HistogramValue) {
        let running = max(sum, other.sum)
        merge(other)
        sum = running
    }

    /// Forgets every value; the storage stays, for the next values.
    mutating func reset() {
        hdr.reset()
        sum = 0
        for slot in buckets.indices { buckets[slot] = 0 }
    }

    /// The value at quantile `q` (0…1) in exported units, or `nil` when nothing was recorded.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let percentile = min(max(q, 0), 1) * 100
        return Double(hdr.valueAtPercentile(percentile)) / scale.resolution
    }

    /// Adds every value of `other`; both must share a scale.
    public mutating func merge(_ other: HistogramValue) {
        hdr.add(other.hdr)
        sum += other.sum
        for slot in buckets.indices where slot < other.buckets.count { buckets[slot] &+= other.buckets[slot] }
    }

    /// The values recorded since `earlier` (an older copy of the same series): per-interval percentiles.
    public func subtracting(_ earlier: HistogramValue) -> HistogramValue {
        var result = HistogramValue(scale: scale)
        for step in hdr.recordedValues() {
            let before = earlier.hdr.countForValue(step.value)
            if step.count > before { _ = result.hdr.record(step.value, count: step.count - before) }
        }
        result.sum = max(0, sum - earlier.sum)
        for slot in result.buckets.indices where slot < buckets.count && slot < earlier.buckets.count {
            result.buckets[slot] = buckets[slot] - min(buckets[slot], earlier.buckets[slot])
        }
        return result
    }

    /// Cumulative counts at each of `scale.bounds`, then the total (`+Inf`), as Prometheus `le` buckets.
    ///
    /// Each value is counted in the first bucket whose bound is at or above it, exactly as recorded (not from the
    /// HDR's rounded buckets), so the export costs one pass over about twenty numbers.
    public func cumulativeBucketCounts() -> [UInt64] {
        let perBucket = buckets
        var running: UInt64 = 0
        return perBucket.map {
            running += $0
            return running
        }
    }
}

extension HistogramScale {
    /// The export bucket a value falls in: the first bound at or above it, or the `+Inf` slot past the last bound.
    @inline(__always)
    func bucket(of value: Double) -> Int {
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if bounds[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
