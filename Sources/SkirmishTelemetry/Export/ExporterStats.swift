/// What the exporter achieved, for the run summary and the exporter's own metrics.
public struct ExporterStats: Sendable, Equatable {
    /// One failure kind at one target.
    public struct FailureKey: Sendable, Hashable, Comparable {
        /// The target's ``PushTarget/name``.
        public let target: String
        /// `connect`, `timeout`, `http_<status>`, `transfer`, `dropped` (queue overflow), …
        public let reason: String

        /// Orders by target, then reason.
        public static func < (lhs: FailureKey, rhs: FailureKey) -> Bool {
            (lhs.target, lhs.reason) < (rhs.target, rhs.reason)
        }
    }

    /// Pushes accepted, by target name.
    public var pushesByTarget: [String: Int] = [:]
    /// Failed attempts and dropped payloads, by target and reason.
    public var failures: [FailureKey: Int] = [:]
    /// The last failure, with target and collector's answer, for people.
    public var lastError: String?

    /// Pushes accepted by every target.
    public var pushes: Int { pushesByTarget.values.reduce(0, +) }
    /// Failures at every target.
    public var totalFailures: Int { failures.values.reduce(0, +) }

    /// One line for the end-of-run table: `exporter: 12 pushes, 3 failures (vm@host connect ×3); last: …`.
    public var summary: String {
        var line = "exporter: \(pushes) pushes, \(totalFailures) failures"
        if !failures.isEmpty {
            let parts = failures.sorted { $0.key < $1.key }.map { "\($0.key.target) \($0.key.reason) ×\($0.value)" }
            line += " (" + parts.joined(separator: ", ") + ")"
        }
        if let lastError { line += "; last: \(lastError)" }
        return line
    }

    /// The stats as series of ``SkirmishMetrics/exporterPushes`` and ``SkirmishMetrics/exporterFailures``.
    func series(constantLabels: Labels) -> [MetricSeries] {
        var result: [MetricSeries] = []
        for (target, count) in pushesByTarget.sorted(by: { $0.key < $1.key }) {
            var labels = constantLabels
            labels["target"] = target
            result.append(
                MetricSeries(family: SkirmishMetrics.exporterPushes, labels: labels, value: .counter(UInt64(count))))
        }
        for (key, count) in failures.sorted(by: { $0.key < $1.key }) {
            var labels = constantLabels
            labels["target"] = key.target
            labels["reason"] = key.reason
            result.append(
                MetricSeries(family: SkirmishMetrics.exporterFailures, labels: labels, value: .counter(UInt64(count))))
        }
        return result
    }
}
