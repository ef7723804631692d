import Histogram

/// A distribution written into `summary.json` and read back exactly, so the shards of one run can be merged after
/// the fact (`skirmish report`, the sharding tests) with the same HDR precision as in the process.
///
/// The HDR counts are stored sparsely as `[value, count]` pairs of recorded units (the handful of buckets in use,
/// not the tens of thousands the histogram spans) with the exact minimum and maximum; re-recording each pair rebuilds
/// the same histogram.
extension HistogramValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case resolution, highest, bounds, sum, count, min, max, buckets, recorded
    }

    /// Reads a distribution written by ``encode(to:)``; throws when the bucket counts do not match the bounds or a
    /// recorded pair is malformed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard
            let scale = HistogramScale.validated(
                resolution: try container.decode(Double.self, forKey: .resolution),
                highest: try container.decode(Double.self, forKey: .highest),
                bounds: try container.decode([Double].self, forKey: .bounds))
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .resolution, in: container,
                debugDescription: "a resolution, top or bound count no histogram of ours has")
        }
        self.init(scale: scale)
        sum = try container.decode(Double.self, forKey: .sum)
        let buckets = try container.decode([UInt64].self, forKey: .buckets)
        guard buckets.count == self.buckets.count else {
            throw DecodingError.dataCorruptedError(
                forKey: .buckets, in: container,
                debugDescription: "\(buckets.count) bucket counts for \(scale.bounds.count) bounds plus +Inf")
        }
        self.buckets = buckets
        // The extremes are kept exactly (a bucket's representative would move the max by up to 0.1 %).
        let extremes = [
            try container.decodeIfPresent(UInt64.self, forKey: .min),
            try container.decodeIfPresent(UInt64.self, forKey: .max),
        ].compactMap { $0 }
        for pair in try container.decode([[UInt64]].self, forKey: .recorded) {
            guard pair.count == 2, pair[0] <= hdr.highestTrackableValue else {
                throw DecodingError.dataCorruptedError(
                    forKey: .recorded, in: container, debugDescription: "a recorded entry is not [value, count]")
            }
            let value = extremes.last { hdr.valuesAreEquivalent($0, pair[0]) } ?? pair[0]
            _ = hdr.record(value, count: pair[1])
        }
    }

    /// Writes the scale, sum, count, exact extremes, export buckets and the sparse HDR `[value, count]` pairs.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(scale.resolution, forKey: .resolution)
        try container.encode(scale.highest, forKey: .highest)
        try container.encode(scale.bounds, forKey: .bounds)
        try container.encode(sum, forKey: .sum)
        try container.encode(count, forKey: .count)
        if count > 0 {
            try container.encode(hdr.min, forKey: .min)
            try container.encode(hdr.maxRecorded, forKey: .max)
        }
        try container.encode(buckets, forKey: .buckets)
        try container.encode(hdr.recordedValues().map { [$0.value, $0.count] }, forKey: .recorded)
    }
}
