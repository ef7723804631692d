/// Every metric family of DESIGN §6, with the one rule for which labels each carries.
///
/// The rule: every series carries the shard's constant labels `run` and `shard`; families measured by bots also
/// carry ``botLabels`` (`game`, `persona`) before their own labels; server families carry only their own labels
/// (a server does not know personas); the exporter's families carry `target`.
public enum SkirmishMetrics {
    /// The constant labels every ``MetricsShard`` puts first on every series.
    public static let constantLabelNames = ["run", "shard"]
    /// The labels every bot-side family carries before its own.
    public static let botLabels = ["game", "persona"]

    /// Bots with an open session.
    public static let botsConnected = bot("skirmish_bots_connected", "Bots with an open session.", .gauge)
    /// Packets sent by bots, by message type and delivery class.
    public static let packetsSent = bot(
        "skirmish_packets_sent_total", "Packets sent by bots.", .counter, ["type", "delivery"])
    /// Packets received by bots, by message type.
    public static let packetsReceived = bot(
        "skirmish_packets_received_total", "Packets received by bots.", .counter, ["type"])
    /// Bytes sent by bots, datagram or frame payloads.
    public static let bytesSent = bot("skirmish_bytes_sent_total", "Bytes sent by bots.", .counter)
    /// Bytes received by bots.
    public static let bytesReceived = bot("skirmish_bytes_received_total", "Bytes received by bots.", .counter)
    /// Desync episodes (first divergent tick of each), by the part of the state that differed.
    public static let desyncs = bot(
        "skirmish_desyncs_total", "Desync episodes detected by bots.", .counter, ["part"])
    /// Time from a desync episode's first divergent tick (on the server's clock, as the bot estimates it) to the bot
    /// detecting it.
    public static let desyncDetection = bot(
        "skirmish_desync_detection_seconds", "Delay from a desync's first divergent tick to its detection.",
        .histogram(.seconds))
    /// Puck predictions off by more than 2 px from the authoritative snapshot.
    public static let mispredictions = bot(
        "skirmish_mispredictions_total", "Predictions more than 2 px off the snapshot.", .counter)
    /// Packets a bot's channel counted as lost.
    public static let packetsLost = bot("skirmish_packets_lost_total", "Packets counted as lost.", .counter)
    /// Reliable messages sent again.
    public static let reliableResends = bot(
        "skirmish_reliable_resends_total", "Reliable messages sent again.", .counter)
    /// Matches a bot saw start.
    public static let matchesStarted = bot("skirmish_matches_started_total", "Matches started.", .counter)
    /// Matches a bot saw to their end.
    public static let matchesCompleted = bot("skirmish_matches_completed_total", "Matches completed.", .counter)
    /// Sessions resumed after a drop.
    public static let reconnects = bot("skirmish_reconnects_total", "Sessions resumed after a drop.", .counter)
    /// Errors seen by bots, by kind.
    public static let errors = bot("skirmish_errors_total", "Errors seen by bots.", .counter, ["kind"])
    /// Replies a check judged (a behaviour's or the runtime's rule for a correct reply), by check.
    public static let checks = bot(
        "skirmish_checks_total", "Replies judged by a check.", .counter, ["check"])
    /// Replies that broke a check's rule, by check (`reply_type`, `welcome_tick_rate`, `score_monotonic`, …).
    public static let checksFailed = bot(
        "skirmish_checks_failed_total", "Replies that failed a check.", .counter, ["check"])
    /// Ping to Pong round trip.
    public static let rtt = bot("skirmish_rtt_seconds", "Ping to Pong round-trip time.", .histogram(.seconds))
    /// Receive time minus the server's tick time.
    public static let snapshotAge = bot(
        "skirmish_snapshot_age_seconds", "Age of snapshots on arrival.", .histogram(.seconds))
    /// Actual minus scheduled send time of each bot input.
    public static let tickLateness = bot(
        "skirmish_tick_lateness_seconds", "Lateness of bot inputs against their schedule.", .histogram(.seconds))
    /// Time from Hello to Welcome.
    public static let handshake = bot("skirmish_handshake_seconds", "Handshake duration.", .histogram(.seconds))
    /// Distance between a predicted and the authoritative puck position.
    public static let predictionError = bot(
        "skirmish_prediction_error_pixels", "Puck prediction error.", .histogram(.pixels))

    /// Packets the server refused, by reason.
    public static let serverRejectedPackets = server(
        "skirmish_server_rejected_packets_total", "Packets the server rejected.", .counter, ["reason"])
    /// Sessions open on the server.
    public static let serverSessions = server("skirmish_server_sessions", "Open server sessions.", .gauge)
    /// Matches running or forming on the server.
    public static let serverMatches = server("skirmish_server_matches", "Running and forming matches.", .gauge)
    /// Packets the server received, by message type.
    public static let serverPacketsReceived = server(
        "skirmish_server_packets_received_total", "Packets the server received.", .counter, ["type"])
    /// Packets the server sent, by message type.
    public static let serverPacketsSent = server(
        "skirmish_server_packets_sent_total", "Packets the server sent.", .counter, ["type"])
    /// 60 Hz ticks the server loop ran (each one steps every running Puck match).
    public static let serverTicks = server("skirmish_server_ticks_total", "60 Hz server ticks run.", .counter)
    /// Time one 60 Hz server tick took: stepping every match, the reliability timers, and writing what they sent.
    ///
    /// One sample per tick, so its count equals ``serverTicks``; a wake-up that catches up several ticks records
    /// each of them as an equal share of its time.
    public static let serverTickSeconds = server(
        "skirmish_server_tick_seconds",
        "Time one 60 Hz server tick took: every match stepped and its packets written.",
        .histogram(.seconds))

    /// Pushes a collector accepted, by target.
    public static let exporterPushes = MetricFamily(
        name: "skirmish_exporter_pushes_total", help: "Pushes a collector accepted.", kind: .counter,
        labelNames: ["target"])
    /// Push attempts that failed, by target and reason (`connect`, `timeout`, `http_500`, `dropped`, …).
    public static let exporterFailures = MetricFamily(
        name: "skirmish_exporter_failures_total", help: "Push attempts that failed.", kind: .counter,
        labelNames: ["target", "reason"])

    /// Every family: those above in declaration order, then the runtime's and the server's own
    /// (`SkirmishMetrics+Runtime.swift`) and bandwidth (`SkirmishMetrics+Traffic.swift`). Dashboards and tests check
    /// names against it.
    public static let all: [MetricFamily] = declaredAbove + runtime + [botBytesPerSecond, serverMatchBytesPerSecond]

    /// The families of this file, in declaration order.
    private static let declaredAbove: [MetricFamily] = [
        botsConnected, packetsSent, packetsReceived, bytesSent, bytesReceived, desyncs, desyncDetection, mispredictions,
        packetsLost, reliableResends, matchesStarted, matchesCompleted, reconnects, errors, checks, checksFailed, rtt,
        snapshotAge, tickLateness, handshake, predictionError, serverRejectedPackets, serverSessions, serverMatches,
        serverPacketsReceived, serverPacketsSent, serverTicks, serverTickSeconds, exporterPushes, exporterFailures,
    ]

    private static func bot(
        _ name: String, _ help: String, _ kind: MetricFamily.Kind, _ labels: [String] = []
    ) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: kind, labelNames: botLabels + labels)
    }

    private static func server(
        _ name: String, _ help: String, _ kind: MetricFamily.Kind, _ labels: [String] = []
    ) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: kind, labelNames: labels)
    }
}
