/// A bytes-per-second distribution at the end of a run: how many samples, their mean, and percentiles.
///
/// Used for the bandwidth of one bot (`skirmish_bot_bytes_per_second`) and of one match
/// (`skirmish_server_match_bytes_per_second`), each way.
public struct RateFigures: Sendable, Codable, Hashable {
    /// Samples recorded (for a bot: connected bot-seconds).
    public var samples: UInt64
    /// The mean sample, in bytes per second (`nil` without samples).
    public var mean: Double?
    /// Median sample.
    public var p50: Double?
    /// 99th percentile sample.
    public var p99: Double?
    /// Largest sample (to the HDR histogram's three significant digits).
    public var max: Double?

    /// The figures of `histogram`, or of nothing when it is `nil`.
    public init(_ histogram: HistogramValue?) {
        samples = histogram?.count ?? 0
        mean = histogram.flatMap { $0.count > 0 ? $0.sum / Double($0.count) : nil }
        p50 = histogram?.quantile(0.5)
        p99 = histogram?.quantile(0.99)
        max = histogram?.quantile(1)
    }

    /// Figures as they are (read back from a page of buckets, where the largest sample is unknown).
    public init(samples: UInt64, mean: Double?, p50: Double?, p99: Double?, max: Double?) {
        self.samples = samples
        self.mean = mean
        self.p50 = p50
        self.p99 = p99
        self.max = max
    }

    /// A rate for people: `812 B/s`, `3.4 KB/s`, `1.25 MB/s` (decimal units, as network rates are quoted).
    public static func format(_ value: Double?) -> String {
        guard let value else { return "—" }
        switch value {
        case ..<1_000: return "\(Int(value.rounded())) B/s"
        case ..<1_000_000: return formatted(value / 1_000, "KB/s")
        default: return formatted(value / 1_000_000, "MB/s")
        }
    }

    private static func formatted(_ value: Double, _ unit: String) -> String {
        // Three significant digits without Foundation's locale-dependent formatting.
        let digits = value < 10 ? 2 : value < 100 ? 1 : 0
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = "\(rounded)"
        if digits == 0, text.hasSuffix(".0") { text.removeLast(2) }
        return text + " " + unit
    }
}
