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

    /// An empty distribution for `scale`.
    public init(scale: HistogramScale) {
        self.scale = scale
        self.sum = 0
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
    }

    /// The values recorded since `earlier` (an older copy of the same series): per-interval percentiles.
    public func subtracting(_ earlier: HistogramValue) -> HistogramValue {
        var result = HistogramValue(scale: scale)
        for step in hdr.recordedValues() {
            let before = earlier.hdr.countForValue(step.value)
            if step.count > before { _ = result.hdr.record(step.value, count: step.count - before) }
        }
        result.sum = max(0, sum - earlier.sum)
        return result
    }

    /// Cumulative counts at each of `scale.bounds`, then the total (`+Inf`), as Prometheus `le` buckets.
    ///
    /// Each HDR bucket is attributed to the first bound at or above its lowest equivalent value, so a value recorded
    /// exactly on a bound counts in that bound's bucket; the error is HDR's (0.1 %), far below the bucket spacing.
    public func cumulativeBucketCounts() -> [UInt64] {
        let bounds = scale.bounds.map { $0 * scale.resolution }
        var perBucket = [UInt64](repeating: 0, count: bounds.count + 1)
        if count > 0 {
            var slot = 0
            for step in hdr.recordedValues() {
                let value = Double(hdr.lowestEquivalentForValue(step.value))
                while slot < bounds.count && value > bounds[slot] { slot += 1 }
                perBucket[slot] += UInt64(step.count)
            }
        }
        var running: UInt64 = 0
        return perBucket.map {
            running += $0
            return running
        }
    }
}
