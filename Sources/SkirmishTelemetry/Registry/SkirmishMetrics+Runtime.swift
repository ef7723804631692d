/// Families the swarm and the reference server add to DESIGN §6's list: handshake outcomes, input timing, pings,
/// rogue traffic, resume time, and the server's own counters. Named by the same conventions.
extension SkirmishMetrics {
    /// `skirmish_handshakes_total{outcome}`: bot handshakes that got a `Welcome` (`ok`) or did not (`failed`).
    public static let handshakes = MetricFamily(
        name: "skirmish_handshakes_total", help: "Handshakes by outcome (ok, failed).", kind: .counter,
        labelNames: botLabels + ["outcome"])
    /// `skirmish_inputs_total{timing}`: scheduled bot inputs sent `on_time` (within 5 ms of schedule) or `late`.
    public static let inputs = MetricFamily(
        name: "skirmish_inputs_total", help: "Scheduled bot inputs, by timing (on_time within 5 ms, late).",
        kind: .counter, labelNames: botLabels + ["timing"])
    /// `skirmish_pings_total{direction}`: the bots' own pings, `sent` and `answered`.
    public static let pings = MetricFamily(
        name: "skirmish_pings_total", help: "Pings sent and answered by bots.", kind: .counter,
        labelNames: botLabels + ["direction"])
    /// `skirmish_rogue_packets_total{kind}`: hostile packets rogue personas sent; their only series.
    public static let roguePackets = MetricFamily(
        name: "skirmish_rogue_packets_total", help: "Hostile packets sent by rogue personas, by kind.",
        kind: .counter, labelNames: botLabels + ["kind"])
    /// `skirmish_protocol_events_total{event}`: a protocol plug-in's own events (ENet fragments and throttle
    /// changes, DDNet input timings, …), named by the plug-in.
    public static let protocolEvents = MetricFamily(
        name: "skirmish_protocol_events_total", help: "Protocol plug-in events, by name.", kind: .counter,
        labelNames: botLabels + ["event"])
    /// `skirmish_packet_bytes_sent_total{type}` and `…_received_total{type}`: the bytes of each kind of packet a
    /// protocol counts (its share of the datagram), beside the per-bot totals of `skirmish_bytes_*_total`.
    public static let packetBytesSent = MetricFamily(
        name: "skirmish_packet_bytes_sent_total", help: "Bytes sent by bots, by packet type.", kind: .counter,
        labelNames: botLabels + ["type"])
    /// `skirmish_packet_bytes_received_total{type}`: as ``packetBytesSent``, the other way.
    public static let packetBytesReceived = MetricFamily(
        name: "skirmish_packet_bytes_received_total", help: "Bytes received by bots, by packet type.",
        kind: .counter, labelNames: botLabels + ["type"])
    /// `skirmish_snapshot_interval_seconds`: the time between consecutive snapshots as a bot received them.
    public static let snapshotInterval = MetricFamily(
        name: "skirmish_snapshot_interval_seconds", help: "Time between consecutive snapshots as received.",
        kind: .histogram(.seconds), labelNames: botLabels)
    /// `skirmish_request_rtt_seconds`: from a behaviour's request to the reply that names it (an echoed sequence
    /// number), as the behaviour matched them — beside `skirmish_rtt_seconds`, the protocol's own round trip.
    public static let requestRTT = MetricFamily(
        name: "skirmish_request_rtt_seconds",
        help: "Time from a bot's request to its reply, as the behaviour matched them.",
        kind: .histogram(.seconds), labelNames: botLabels)
    /// `skirmish_reconnect_seconds`: from a bot's resume attempt to its `Welcome`, in seconds.
    public static let reconnect = MetricFamily(
        name: "skirmish_reconnect_seconds", help: "Time from a resume attempt to the Welcome.",
        kind: .histogram(.seconds), labelNames: botLabels)

    /// `skirmish_server_bytes_received_total`: game bytes the server received — UDP datagrams, TCP frames and WebSocket
    /// frames, framing included — and no HTTP request (a `/metrics` scrape, the page, a WebSocket's upgrade).
    public static let serverBytesReceived = MetricFamily(
        name: "skirmish_server_bytes_received_total",
        help: "Game bytes the server received over UDP, TCP and WebSocket; HTTP requests (scrapes) are not counted.",
        kind: .counter)
    /// `skirmish_server_bytes_sent_total`: bytes the server sent over UDP.
    public static let serverBytesSent = MetricFamily(
        name: "skirmish_server_bytes_sent_total", help: "Bytes the server sent over UDP.", kind: .counter)
    /// `skirmish_server_challenges_total`: cookie `Challenge`s the server sent.
    public static let serverChallenges = MetricFamily(
        name: "skirmish_server_challenges_total", help: "Cookie challenges sent.", kind: .counter)
    /// `skirmish_server_resumes_total`: players who took their seat back with a resume token.
    public static let serverResumes = MetricFamily(
        name: "skirmish_server_resumes_total", help: "Players re-attached to their seat.", kind: .counter)
    /// `skirmish_server_late_ticks_total`: ticks the server ran behind its 60 Hz schedule.
    public static let serverLateTicks = MetricFamily(
        name: "skirmish_server_late_ticks_total", help: "Times the server fell behind its 60 Hz schedule.",
        kind: .counter)
    /// `skirmish_server_forfeits_total`: Puck matches ended because a player stayed away.
    public static let serverForfeits = MetricFamily(
        name: "skirmish_server_forfeits_total", help: "Puck matches forfeited by an absent player.", kind: .counter)
    /// `skirmish_server_desyncs_total{game}`: end-of-match tallies the players disagreed on.
    public static let serverDesyncs = MetricFamily(
        name: "skirmish_server_desyncs_total", help: "Tallies that disagreed, by game.", kind: .counter,
        labelNames: ["game"])
    /// `skirmish_server_unsettled_tallies_total{game}`: tallies that disagreed while one of them was sent before its
    /// player had acknowledged every capture the server had relayed to it (one still in flight): the views were
    /// compared before they could agree, so the disagreement is late delivery, not a desync.
    public static let serverUnsettledTallies = MetricFamily(
        name: "skirmish_server_unsettled_tallies_total",
        help: "Tallies that disagreed while a capture relayed to one of their players was unacknowledged, by game.",
        kind: .counter, labelNames: ["game"])
    /// `skirmish_server_detached_sessions`: sessions whose connection dropped, held for a resume (a gauge).
    public static let serverDetachedSessions = MetricFamily(
        name: "skirmish_server_detached_sessions", help: "Sessions held for a resume.", kind: .gauge)
    /// `skirmish_server_matches_started_total{game}`: matches the server started.
    public static let serverMatchesStarted = MetricFamily(
        name: "skirmish_server_matches_started_total", help: "Matches started, by game.", kind: .counter,
        labelNames: ["game"])
    /// `skirmish_server_matches_completed_total{game}`: matches that ran to their end.
    public static let serverMatchesCompleted = MetricFamily(
        name: "skirmish_server_matches_completed_total", help: "Matches completed, by game.", kind: .counter,
        labelNames: ["game"])
    /// `skirmish_server_matches_abandoned_total{game}`: forming matches given up after the matchmaking timeout.
    public static let serverMatchesAbandoned = MetricFamily(
        name: "skirmish_server_matches_abandoned_total",
        help: "Forming matches given up after the matchmaking timeout, by game.", kind: .counter,
        labelNames: ["game"])
}

extension SkirmishMetrics {
    /// The families of this file, in declaration order: bot-side (handshake outcomes, inputs, pings, rogue
    /// traffic, protocol events, bytes by packet type, snapshot intervals, resume time), then the server's.
    public static let runtime: [MetricFamily] = [
        handshakes, inputs, pings, roguePackets, protocolEvents, packetBytesSent, packetBytesReceived, snapshotInterval,
        reconnect, serverBytesReceived, serverBytesSent, serverChallenges, serverResumes, serverLateTicks,
        serverForfeits, serverDesyncs, serverUnsettledTallies, serverDetachedSessions, serverMatchesStarted,
        serverMatchesCompleted,
        serverMatchesAbandoned,
    ]
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
