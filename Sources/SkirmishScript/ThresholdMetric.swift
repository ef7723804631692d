/// A figure a threshold can test: a percentile of a latency histogram, a count, or a rate.
public enum ThresholdMetric: Sendable, Hashable {
    /// A latency (or prediction-error) distribution a percentile threshold reads, by its script name.
    public enum Histogram: String, Sendable, Hashable, CaseIterable {
        case rtt
        case snapshotAge = "snapshot_age"
        case tickLateness = "tick_lateness"
        case handshake
        case reconnect
        case predictionError = "prediction_error"

        /// Pixels for prediction error, seconds for the rest.
        var isPixels: Bool { self == .predictionError }
    }

    /// A count over the run (or a window), by its script name; thresholds compare it with a whole number.
    public enum Count: String, Sendable, Hashable, CaseIterable {
        case desyncs
        case mispredictions
        case errors
        case reconnects
        case packetsLost = "packets_lost"
        case resends
        case matchesStarted = "matches_started"
        case matchesCompleted = "matches_completed"
        case handshakeFailures = "handshake_failures"
        case exporterFailures = "exporter_failures"
        case checksFailed = "checks_failed"
    }

    /// A fraction in [0, 1] over the run (or a window), by its script name; `< 1%` is a limit of 0.01.
    public enum Rate: String, Sendable, Hashable, CaseIterable {
        case handshakeFailureRate = "handshake_failure_rate"
        case packetLossRate = "packet_loss_rate"
        case errorRate = "error_rate"
        case onTimeSendRate = "on_time_send_rate"
        case replyRate = "reply_rate"
        case checkFailureRate = "check_failure_rate"
    }

    /// A quantile in (0, 1], 1 meaning the maximum.
    case percentile(Histogram, quantile: Double)
    case count(Count)
    case rate(Rate)

    static let quantileSuffixes: [(String, Double)] = [
        ("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99), ("p999", 0.999), ("max", 1),
    ]

    /// Parses names like `rtt_p99`, `desyncs`, `handshake_failure_rate`.
    init?(name: String) {
        if let count = Count(rawValue: name) {
            self = .count(count)
        } else if let rate = Rate(rawValue: name) {
            self = .rate(rate)
        } else {
            for (suffix, quantile) in Self.quantileSuffixes where name.hasSuffix("_" + suffix) {
                if let histogram = Histogram(rawValue: String(name.dropLast(suffix.count + 1))) {
                    self = .percentile(histogram, quantile: quantile)
                    return
                }
            }
            return nil
        }
    }

    /// The name as a script writes it: `rtt_p99`, `desyncs`, `handshake_failure_rate`.
    public var name: String {
        switch self {
        case .percentile(let histogram, let quantile):
            let suffix = Self.quantileSuffixes.first { $0.1 == quantile }?.0 ?? "p\(quantile)"
            return histogram.rawValue + "_" + suffix
        case .count(let count): return count.rawValue
        case .rate(let rate): return rate.rawValue
        }
    }

    /// Every name a script may use, for hints.
    static var allNames: [String] {
        Histogram.allCases.flatMap { h in quantileSuffixes.map { h.rawValue + "_" + $0.0 } }
            + Count.allCases.map(\.rawValue) + Rate.allCases.map(\.rawValue)
    }

    /// How a limit for this metric is written, for hints.
    var example: String {
        switch self {
        case .percentile(let histogram, _): histogram.isPixels ? "\"< 4px\"" : "\"< 120ms\""
        case .count: "\"== 0\""
        case .rate: "\"< 0.1%\""
        }
    }
}
