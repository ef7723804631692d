import Histogram

/// A distribution as the few HDR values it actually holds: what a window or a block of a run is judged on.
///
/// A ``HistogramValue`` spans tens of thousands of HDR buckets; the values recorded in one second or one minute of a
/// run fill a few hundred of them. This keeps those `(value, count)` pairs, sorted, with the same units and the same
/// quantile rule as the HDR histogram, so windows can be added and subtracted cheaply (a threshold's sliding window)
/// and resampled thousands of times (`skirmish compare`'s bootstrap) without rebuilding a histogram each time.
public struct SparseDistribution: Sendable, Hashable, Codable {
    /// Recorded units per exported unit (`1e6` for seconds kept to the microsecond).
    public let resolution: Double
    /// The distinct values, in recorded units and ascending; each is its HDR bucket's highest equivalent value.
    public private(set) var values: [UInt64]
    /// How many times each of ``values`` was recorded.
    public private(set) var counts: [UInt64]
    /// The number of values recorded.
    public private(set) var total: UInt64
    /// The exact smallest and largest values (recorded units) when known: read from a whole histogram, not yet
    /// added to or subtracted from. Quantiles are clamped to them, as the HDR histogram's are.
    private var extremes: ClosedRange<UInt64>?

    private enum CodingKeys: String, CodingKey {
        case resolution, values, counts, min, max
    }

    /// An empty distribution in units of `resolution`.
    public init(resolution: Double) {
        self.resolution = resolution
        values = []
        counts = []
        total = 0
    }

    /// The values `histogram` holds.
    public init(_ histogram: HistogramValue) {
        self.init(resolution: histogram.scale.resolution)
        for step in histogram.hdr.recordedValues() where step.count > 0 {
            values.append(step.value)
            counts.append(step.count)
            total &+= step.count
        }
        if total > 0 { extremes = histogram.hdr.min...max(histogram.hdr.min, histogram.hdr.maxRecorded) }
    }

    /// Reads a distribution written by ``encode(to:)``; throws unless the values ascend strictly and match the counts.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        resolution = try container.decode(Double.self, forKey: .resolution)
        let values = try container.decode([UInt64].self, forKey: .values)
        let counts = try container.decode([UInt64].self, forKey: .counts)
        guard values.count == counts.count, zip(values, values.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw DecodingError.dataCorruptedError(
                forKey: .values, in: container,
                debugDescription: "values must ascend strictly and match counts one for one")
        }
        self.values = values
        self.counts = counts
        total = counts.reduce(0, &+)
        if let low = try container.decodeIfPresent(UInt64.self, forKey: .min),
            let high = try container.decodeIfPresent(UInt64.self, forKey: .max), low <= high
        {
            extremes = low...high
        }
    }

    /// Writes the resolution, the values with their counts, and the exact minimum and maximum when there are samples.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(resolution, forKey: .resolution)
        try container.encode(values, forKey: .values)
        try container.encode(counts, forKey: .counts)
        try container.encodeIfPresent(extremes?.lowerBound, forKey: .min)
        try container.encodeIfPresent(extremes?.upperBound, forKey: .max)
    }

    /// Whether nothing was recorded.
    public var isEmpty: Bool { total == 0 }

    /// The value at quantile `q` (0…1) in exported units, `nil` when empty: the smallest recorded value with at
    /// least `⌈q · total⌉` values at or below it — the HDR histogram's rule, so a distribution read from a whole
    /// ``HistogramValue`` answers as the histogram does (to its bucket's highest equivalent value).
    public func quantile(_ q: Double) -> Double? {
        guard total > 0 else { return nil }
        guard let extremes else {
            return Double(values[Self.quantileIndex(q, values: values, counts: counts, total: total)]) / resolution
        }
        if q <= 0 { return Double(extremes.lowerBound) / resolution }
        if q >= 1 { return Double(extremes.upperBound) / resolution }
        let value = values[Self.quantileIndex(q, values: values, counts: counts, total: total)]
        return Double(max(min(value, extremes.upperBound), extremes.lowerBound)) / resolution
    }

    /// The position in `values` of the quantile `q`, for callers that keep counts of their own (resampling).
    public static func quantileIndex(_ q: Double, values: [UInt64], counts: [UInt64], total: UInt64) -> Int {
        let percentile = min(max((min(max(q, 0), 1) * 100).nextDown, 0), 100)
        let wanted = max(1, UInt64((percentile * Double(total) / 100).rounded(.up)))
        var running: UInt64 = 0
        for index in counts.indices {
            running &+= counts[index]
            if running >= wanted { return index }
        }
        return max(0, counts.count - 1)
    }

    /// Adds every value of `other` (same resolution).
    public mutating func add(_ other: SparseDistribution) {
        combine(other) { $0 &+ $1 }
    }

    /// Removes the values of `other`, an earlier part of this distribution; counts never go below zero.
    public mutating func subtract(_ other: SparseDistribution) {
        combine(other) { $0 - min($0, $1) }
    }

    /// The values recorded since `earlier`, an older reading of the same series.
    public func subtracting(_ earlier: SparseDistribution) -> SparseDistribution {
        var result = self
        result.subtract(earlier)
        return result
    }

    private mutating func combine(_ other: SparseDistribution, _ operation: (UInt64, UInt64) -> UInt64) {
        guard !other.values.isEmpty else { return }
        var mergedValues: [UInt64] = []
        var mergedCounts: [UInt64] = []
        mergedValues.reserveCapacity(values.count + other.values.count)
        mergedCounts.reserveCapacity(values.count + other.values.count)
        var i = 0
        var j = 0
        while i < values.count || j < other.values.count {
            let value: UInt64
            var count: UInt64
            if j == other.values.count || (i < values.count && values[i] < other.values[j]) {
                value = values[i]
                count = counts[i]
                i += 1
            } else if i == values.count || other.values[j] < values[i] {
                value = other.values[j]
                count = operation(0, other.counts[j])
                j += 1
            } else {
                value = values[i]
                count = operation(counts[i], other.counts[j])
                i += 1
                j += 1
            }
            if count > 0 {
                mergedValues.append(value)
                mergedCounts.append(count)
            }
        }
        values = mergedValues
        counts = mergedCounts
        total = mergedCounts.reduce(0, &+)
        extremes = nil
    }
}
