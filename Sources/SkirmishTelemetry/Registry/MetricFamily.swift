/// A named metric: what it measures, how it aggregates, and which labels tell its series apart.
///
/// Families are values so that every module can declare or compare them without a registry; the shared ones live in
/// ``SkirmishMetrics``. `labelNames` lists the per-series labels in export order; the constant labels of a shard
/// (`run`, `shard`) come first in every exported series and are not listed here.
public struct MetricFamily: Sendable, Hashable {
    /// How the series of a family aggregate, and how collectors should read them.
    public enum Kind: Sendable, Hashable {
        /// A monotonic cumulative count (`_total`); merged by summing.
        case counter
        /// A value that goes up and down; merged by summing (per-loop parts of one process-wide quantity).
        case gauge
        /// A distribution kept in an HDR histogram and exported as fixed buckets plus `_sum` and `_count`.
        case histogram(HistogramScale)
    }

    /// The exported name, already sanitised to `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    public let name: String
    /// One line of help, exported as `# HELP`.
    public let help: String
    /// How the series aggregate.
    public let kind: Kind
    /// The per-series label names, in export order.
    public let labelNames: [String]

    /// Declares a family; the name and label names are sanitised for every collector.
    public init(name: String, help: String, kind: Kind, labelNames: [String] = []) {
        self.name = MetricName.sanitise(name)
        self.help = help
        self.kind = kind
        self.labelNames = labelNames.map(MetricName.sanitiseLabel)
    }

    /// The unit suffix OpenTelemetry expects (`s`, `1`, `px`), derived from the name's Prometheus unit suffix.
    var unit: String {
        if name.hasSuffix("_seconds") { return "s" }
        if name.hasSuffix("_pixels") { return "px" }
        if name.hasSuffix("_bytes_sent_total") || name.hasSuffix("_bytes_received_total") { return "By" }
        if name.hasSuffix("_bytes_per_second") { return "By/s" }
        return "1"
    }
}

/// How a histogram family turns measured values into HDR counts, and which buckets it exports.
///
/// HDR histograms record integers, so a value is multiplied by `resolution` first: `1e6` keeps seconds to the
/// microsecond. The exported buckets are fixed so every collector and every run shares the same `le` values.
public struct HistogramScale: Sendable, Hashable {
    /// Recorded units per exported unit (`1e6` records seconds as microseconds).
    public let resolution: Double
    /// The largest value kept exactly, in exported units; larger values are clamped to it.
    public let highest: Double
    /// Upper bounds of the exported buckets in exported units, ascending; `+Inf` is implicit.
    public let bounds: [Double]

    /// A scale read from a file, or `nil` when it could not be one of ours: a resolution and top that are not
    /// finite and positive, more recorded units than an HDR histogram spans (2⁶² at most), or more than 1,000 bounds.
    public static func validated(resolution: Double, highest: Double, bounds: [Double]) -> HistogramScale? {
        guard resolution.isFinite, resolution > 0, highest.isFinite, highest > 0, highest * resolution < 0x1p62,
            bounds.count <= 1_000
        else { return nil }
        return HistogramScale(resolution: resolution, highest: highest, bounds: bounds)
    }

    /// A scale with explicit bounds; bounds are sorted and de-duplicated.
    public init(resolution: Double, highest: Double, bounds: [Double]) {
        self.resolution = resolution
        self.highest = highest
        self.bounds = Array(Set(bounds.filter { $0.isFinite && $0 > 0 })).sorted()
    }

    /// Seconds to the microsecond, up to 100 s; buckets 100 µs … 10 s in steps of 1-2-5 (about ×2.15 each).
    public static let seconds = HistogramScale(
        resolution: 1e6,
        highest: 100,
        bounds: exponentialSteps(from: -4, through: 1)
    )

    /// Pixels to the hundredth, up to 100,000 px; buckets 0.1 … 1,000 px in steps of 1-2-5.
    public static let pixels = HistogramScale(
        resolution: 100,
        highest: 100_000,
        bounds: exponentialSteps(from: -1, through: 3)
    )

    /// Bytes per second to the byte, up to 100 MB/s; buckets 10 B/s … 10 MB/s in steps of 1-2-5.
    ///
    /// One bot's or one match's traffic: an idle session's keepalives (tens of B/s) to a Puck match's snapshots
    /// (a few KB/s each way) with room for a game that streams far more.
    public static let bytesPerSecond = HistogramScale(
        resolution: 1,
        highest: 100_000_000,
        bounds: exponentialSteps(from: 1, through: 7)
    )

    /// 1, 2, 5 × 10^e for every decade e in the range, ending at 10^last.
    static func exponentialSteps(from first: Int, through last: Int) -> [Double] {
        var bounds: [Double] = []
        for exponent in first...last {
            for mantissa in exponent < last ? [1, 2, 5] : [1] {
                // Parse the decimal text so bounds print as `0.002`, not `0.0020000000000000005`.
                if let value = Double("\(mantissa)e\(exponent)") { bounds.append(value) }
            }
        }
        return bounds
    }
}
