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
    /// Targets failing right now, by name: failed attempts in a row and the last reason. An accepted push removes
    /// its target, so this says whether a collector is failing *now*, which the totals cannot.
    public var failing: [String: Streak] = [:]

    /// Failed attempts in a row at one target.
    public struct Streak: Sendable, Equatable {
        /// Attempts that failed since the last accepted push.
        public var attempts: Int
        /// The reason of the latest (`connect`, `http_503`, …).
        public var reason: String
    }

    /// For the live progress line while a collector is failing (`collector failing: vm@host:8428 connect ×3`), or
    /// `nil` when every collector took its last push.
    public var liveStatus: String? {
        guard !failing.isEmpty else { return nil }
        let parts = failing.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.reason) ×\($0.value.attempts)" }
        return "collector failing: " + parts.joined(separator: ", ")
    }

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

    /// Failure reasons every target reports from the first push, at 0 until one happens: a dashboard or an alert
    /// on exporter failures then shows a healthy 0 instead of "No data".
    public static let standingReasons = ["connect", "timeout", "dropped"]

    /// The stats as series of ``SkirmishMetrics/exporterPushes`` and ``SkirmishMetrics/exporterFailures``; every
    /// one of `targets` has its pushes and its ``standingReasons`` even while they are 0.
    func series(constantLabels: Labels, targets: [String] = []) -> [MetricSeries] {
        var result: [MetricSeries] = []
        var pushes = pushesByTarget
        var failures = failures
        for target in targets {
            pushes[target, default: 0] += 0
            for reason in Self.standingReasons { failures[FailureKey(target: target, reason: reason), default: 0] += 0 }
        }
        for (target, count) in pushes.sorted(by: { $0.key < $1.key }) {
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
