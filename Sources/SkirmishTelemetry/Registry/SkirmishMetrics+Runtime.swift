/// Families the swarm and the reference server add to DESIGN §6's list: handshake outcomes, input timing, pings,
/// rogue traffic, resume time, and the server's own counters. Named by the same conventions.
extension SkirmishMetrics {
    public static let handshakes = MetricFamily(
        name: "skirmish_handshakes_total", help: "Handshakes by outcome (ok, failed).", kind: .counter,
        labelNames: botLabels + ["outcome"])
    public static let inputs = MetricFamily(
        name: "skirmish_inputs_total", help: "Scheduled bot inputs, by timing (on_time within 5 ms, late).",
        kind: .counter, labelNames: botLabels + ["timing"])
    public static let pings = MetricFamily(
        name: "skirmish_pings_total", help: "Pings sent and answered by bots.", kind: .counter,
        labelNames: botLabels + ["direction"])
    public static let roguePackets = MetricFamily(
        name: "skirmish_rogue_packets_total", help: "Hostile packets sent by rogue personas, by kind.",
        kind: .counter, labelNames: botLabels + ["kind"])
    public static let reconnect = MetricFamily(
        name: "skirmish_reconnect_seconds", help: "Time from a resume attempt to the Welcome.",
        kind: .histogram(.seconds), labelNames: botLabels)

    public static let serverBytesReceived = MetricFamily(
        name: "skirmish_server_bytes_received_total", help: "Bytes the server received.", kind: .counter)
    public static let serverBytesSent = MetricFamily(
        name: "skirmish_server_bytes_sent_total", help: "Bytes the server sent over UDP.", kind: .counter)
    public static let serverChallenges = MetricFamily(
        name: "skirmish_server_challenges_total", help: "Cookie challenges sent.", kind: .counter)
    public static let serverResumes = MetricFamily(
        name: "skirmish_server_resumes_total", help: "Players re-attached to their seat.", kind: .counter)
    public static let serverLateTicks = MetricFamily(
        name: "skirmish_server_late_ticks_total", help: "Times the server fell behind its 60 Hz schedule.",
        kind: .counter)
    public static let serverForfeits = MetricFamily(
        name: "skirmish_server_forfeits_total", help: "Puck matches forfeited by an absent player.", kind: .counter)
    public static let serverDesyncs = MetricFamily(
        name: "skirmish_server_desyncs_total", help: "Tallies that disagreed, by game.", kind: .counter,
        labelNames: ["game"])
    public static let serverDetachedSessions = MetricFamily(
        name: "skirmish_server_detached_sessions", help: "Sessions held for a resume.", kind: .gauge)
    public static let serverMatchesStarted = MetricFamily(
        name: "skirmish_server_matches_started_total", help: "Matches started, by game.", kind: .counter,
        labelNames: ["game"])
    public static let serverMatchesCompleted = MetricFamily(
        name: "skirmish_server_matches_completed_total", help: "Matches completed, by game.", kind: .counter,
        labelNames: ["game"])
    public static let serverMatchesAbandoned = MetricFamily(
        name: "skirmish_server_matches_abandoned_total",
        help: "Forming matches given up after the matchmaking timeout, by game.", kind: .counter,
        labelNames: ["game"])
}

extension Labels {
    /// Labels from a dictionary (order does not matter: a family puts them in its own order).
    public init(_ dictionary: [String: String]) {
        self.init(dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// These labels with `extra` added.
    public func adding(_ extra: [String: String]) -> Labels {
        Labels(extra).appending(self)
    }
}

extension MetricsSnapshot {
    /// A counter family's totals grouped by the value of `label`, zeros left out.
    public func counterBreakdown(
        _ family: MetricFamily, by label: String, where filter: [String: String] = [:]
    ) -> [String: UInt64] {
        var result: [String: UInt64] = [:]
        for series in series(of: family, where: filter) {
            guard case .counter(let value) = series.value, value > 0 else { continue }
            result[series.labels[label] ?? "", default: 0] &+= value
        }
        return result
    }
}
