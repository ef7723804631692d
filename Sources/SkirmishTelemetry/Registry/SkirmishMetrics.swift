/// Every metric family Skirmish exports, named as DESIGN §6 says (base units, `_total` counters).
///
/// Swarm series carry `run`, `shard`, `game` and `persona`; server series carry `run` and `shard` when pushed.
/// Dashboards in `dashboards/` use exactly these names.
public enum SkirmishMetrics {
    // MARK: Swarm
    public static let botsConnected = MetricFamily(
        name: "skirmish_bots_connected", help: "Bots with a live session to the server.", kind: .gauge)
    public static let packetsSent = MetricFamily(
        name: "skirmish_packets_sent_total", help: "Packets sent by bots, by type and delivery class.", kind: .counter)
    public static let packetsReceived = MetricFamily(
        name: "skirmish_packets_received_total", help: "Packets received by bots, by type.", kind: .counter)
    public static let bytesSent = MetricFamily(
        name: "skirmish_bytes_sent_total", help: "Bytes sent by bots.", kind: .counter)
    public static let bytesReceived = MetricFamily(
        name: "skirmish_bytes_received_total", help: "Bytes received by bots.", kind: .counter)
    public static let desyncs = MetricFamily(
        name: "skirmish_desyncs_total",
        help: "Desync episodes: a replica's state disagreed with the server's, by game and the part that diverged.",
        kind: .counter)
    public static let mispredictions = MetricFamily(
        name: "skirmish_mispredictions_total",
        help: "Predicted puck positions more than 2 px from the authoritative snapshot.", kind: .counter)
    public static let packetsLost = MetricFamily(
        name: "skirmish_packets_lost_total", help: "Gaps in the numbering of unreliable packets received.",
        kind: .counter)
    public static let reliableResends = MetricFamily(
        name: "skirmish_reliable_resends_total", help: "Reliable packets resent after a retransmission timeout.",
        kind: .counter)
    public static let matchesStarted = MetricFamily(
        name: "skirmish_matches_started_total", help: "Matches that began play.", kind: .counter)
    public static let matchesCompleted = MetricFamily(
        name: "skirmish_matches_completed_total", help: "Matches played to their end.", kind: .counter)
    public static let reconnects = MetricFamily(
        name: "skirmish_reconnects_total", help: "Sessions resumed after a drop.", kind: .counter)
    public static let errors = MetricFamily(
        name: "skirmish_errors_total", help: "Errors by kind (handshake timeouts, rejections, lost connections).",
        kind: .counter)
    public static let handshakes = MetricFamily(
        name: "skirmish_handshakes_total", help: "Handshakes by outcome (ok, failed).", kind: .counter)
    public static let inputs = MetricFamily(
        name: "skirmish_inputs_total", help: "Scheduled inputs, by timing (on_time within 5 ms, late).",
        kind: .counter)
    public static let pings = MetricFamily(
        name: "skirmish_pings_total", help: "Pings sent and answered by bots.", kind: .counter)
    public static let roguePackets = MetricFamily(
        name: "skirmish_rogue_packets_total", help: "Hostile packets sent by rogue personas, by kind.",
        kind: .counter)
    public static let rtt = MetricFamily(
        name: "skirmish_rtt_seconds", help: "Round-trip time from Ping to Pong.", kind: .histogram(.seconds))
    public static let snapshotAge = MetricFamily(
        name: "skirmish_snapshot_age_seconds",
        help: "Receive time minus the server's time for the snapshot's tick.", kind: .histogram(.seconds))
    public static let tickLateness = MetricFamily(
        name: "skirmish_tick_lateness_seconds",
        help: "Actual minus scheduled send time of each bot input.", kind: .histogram(.seconds))
    public static let handshake = MetricFamily(
        name: "skirmish_handshake_seconds", help: "Time from the first Hello to the Welcome.",
        kind: .histogram(.seconds))
    public static let reconnect = MetricFamily(
        name: "skirmish_reconnect_seconds", help: "Time from a resume attempt to the Welcome.",
        kind: .histogram(.seconds))
    public static let predictionError = MetricFamily(
        name: "skirmish_prediction_error_pixels",
        help: "Distance between the predicted and the authoritative puck position.", kind: .histogram(.pixels))

    // MARK: Exporter
    public static let exporterPushes = MetricFamily(
        name: "skirmish_exporter_pushes_total", help: "Pushes to a collector, by target and outcome.",
        kind: .counter)

    // MARK: Server
    public static let serverRejectedPackets = MetricFamily(
        name: "skirmish_server_rejected_packets_total", help: "Packets the server dropped, by reason.",
        kind: .counter)
    public static let serverPacketsReceived = MetricFamily(
        name: "skirmish_server_packets_received_total", help: "Packets the server received, by type.",
        kind: .counter)
    public static let serverPacketsSent = MetricFamily(
        name: "skirmish_server_packets_sent_total", help: "Packets the server sent, by type.", kind: .counter)
    public static let serverBytesReceived = MetricFamily(
        name: "skirmish_server_bytes_received_total", help: "Bytes the server received.", kind: .counter)
    public static let serverBytesSent = MetricFamily(
        name: "skirmish_server_bytes_sent_total", help: "Bytes the server sent over UDP.", kind: .counter)
    public static let serverChallenges = MetricFamily(
        name: "skirmish_server_challenges_total", help: "Cookie challenges sent.", kind: .counter)
    public static let serverResumes = MetricFamily(
        name: "skirmish_server_resumes_total", help: "Players re-attached to their seat.", kind: .counter)
    public static let serverTicks = MetricFamily(
        name: "skirmish_server_ticks_total", help: "60 Hz server ticks run.", kind: .counter)
    public static let serverLateTicks = MetricFamily(
        name: "skirmish_server_late_ticks_total", help: "Times the server fell behind its 60 Hz schedule.",
        kind: .counter)
    public static let serverForfeits = MetricFamily(
        name: "skirmish_server_forfeits_total", help: "Puck matches forfeited by an absent player.", kind: .counter)
    public static let serverDesyncs = MetricFamily(
        name: "skirmish_server_desyncs_total", help: "Suns tallies that disagreed.", kind: .counter)
    public static let serverMatchesStarted = MetricFamily(
        name: "skirmish_server_matches_started_total", help: "Matches started, by game.", kind: .counter)
    public static let serverMatchesCompleted = MetricFamily(
        name: "skirmish_server_matches_completed_total", help: "Matches completed, by game.", kind: .counter)
    public static let serverMatchesAbandoned = MetricFamily(
        name: "skirmish_server_matches_abandoned_total",
        help: "Forming matches given up after the matchmaking timeout, by game.", kind: .counter)
    public static let serverSessions = MetricFamily(
        name: "skirmish_server_sessions", help: "Sessions held, by state (attached, detached).", kind: .gauge)
    public static let serverMatches = MetricFamily(
        name: "skirmish_server_matches", help: "Matches running or forming.", kind: .gauge)
}
