import Histogram

/// One histogram series: an HDR histogram for exact percentiles, plus the fixed export buckets, sum and count.
///
/// Values are recorded as integers in the unit's resolution (microseconds, hundredths of a pixel), so the HDR
/// histogram's relative error (1 %) applies to the value, not to a rounding of it.
public struct Distribution: Sendable {
    public let unit: HistogramUnit
    var hdr: Histogram<UInt64>
    /// Per export bound, the number of values at or below it (not cumulative across bounds until rendered).
    var bucketCounts: [UInt64]
    public private(set) var sum: Double = 0
    public private(set) var count: UInt64 = 0

    /// The largest value kept exactly (100 s, 10⁴ px); larger ones are clamped to it.
    static let highest: UInt64 = 100_000_000

    init(unit: HistogramUnit) {
        self.unit = unit
        hdr = Histogram<UInt64>(
            lowestDiscernibleValue: 1, highestTrackableValue: Self.highest, numberOfSignificantValueDigits: .two)
        bucketCounts = [UInt64](repeating: 0, count: unit.bounds.count)
    }

    mutating func record(_ value: Double) {
        guard value.isFinite else { return }
        let clamped = max(0, value)
        sum += clamped
        count &+= 1
        let scaled = UInt64(min(clamped * unit.scale, Double(Self.highest)).rounded())
        _ = hdr.record(scaled)
        let bounds = unit.bounds
        var index = 0
        while index < bounds.count, clamped > bounds[index] { index += 1 }
        if index < bounds.count { bucketCounts[index] &+= 1 }
    }

    mutating func merge(_ other: Distribution) {
        hdr.add(other.hdr)
        for index in bucketCounts.indices { bucketCounts[index] &+= other.bucketCounts[index] }
        sum += other.sum
        count &+= other.count
    }

    /// The value at quantile `q` (0…1) in the exported unit; `nil` when nothing was recorded.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        if q >= 1 { return Double(hdr.max) / unit.scale }
        return Double(hdr.valueAtPercentile(q * 100)) / unit.scale
    }

    /// Cumulative counts per export bound (`le`), ending with `+Inf` = ``count``.
    public var cumulativeBuckets: [(bound: Double, count: UInt64)] {
        var running: UInt64 = 0
        var result: [(Double, UInt64)] = []
        for (bound, count) in zip(unit.bounds, bucketCounts) {
            running &+= count
            result.append((bound, running))
        }
        result.append((.infinity, count))
        return result
    }
}
