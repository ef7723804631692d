import Foundation

/// The reference server's own figures at the end of a run (`skirmish_server_*`), for the summary and the report.
///
/// Read from the same merged snapshot the exporter pushes, so a run against the embedded server shows what the
/// server saw beside what the bots felt: its packets, rejections by reason, matches, and how long its loop took.
public struct ServerFigures: Sendable, Codable, Equatable {
    /// Sessions open at the end.
    public var sessions: Double
    /// Matches running or forming at the end.
    public var matches: Double
    /// Packets the server received and sent.
    public var packetsReceived: UInt64
    /// Packets the server sent.
    public var packetsSent: UInt64
    /// Game bytes the server received over UDP, TCP and WebSocket (no HTTP request: a scrape is not counted).
    public var bytesReceived: UInt64
    /// Bytes the server sent over UDP.
    public var bytesSent: UInt64
    /// Cookie challenges sent.
    public var challenges: UInt64
    /// Players re-attached to their seat.
    public var resumes: UInt64
    /// 60 Hz ticks run, and those that ran behind schedule.
    public var ticks: UInt64
    /// Times the loop fell behind its 60 Hz schedule.
    public var lateTicks: UInt64
    /// Puck matches forfeited by an absent player.
    public var forfeits: UInt64
    /// Matches started, completed and abandoned, by game.
    public var matchesByGame: [String: [UInt64]]
    /// Desyncs the server detected (Suns tallies that disagreed), by game.
    public var desyncs: [String: UInt64]
    /// Packets refused, by reason; reasons that never happened are left out.
    public var rejections: [String: UInt64]
    /// Time one 60 Hz tick took (`skirmish_server_tick_seconds`): p50, p99 and max in seconds (`nil` when
    /// unmeasured).
    public var tickDurationP50: Double?
    /// 99th percentile time of one tick.
    public var tickDurationP99: Double?
    /// Longest tick (`nil` when scraped: a Prometheus page has no maximum).
    public var tickDurationMax: Double?
    /// The `/metrics` URL the figures were scraped from, or `nil` for the embedded server.
    public var scrapedFrom: String?
    /// Bytes per second of one running match each way (`skirmish_server_match_bytes_per_second`), by game; games
    /// without a sample are left out (`nil` in summaries written before it existed).
    public var matchBytesPerSecond: [String: TrafficFigures]?

    /// The server's figures in `snapshot`, or `nil` when it holds none (the run used an external `--target`).
    public init?(snapshot: MetricsSnapshot) {
        guard !snapshot.series(of: SkirmishMetrics.serverTicks).isEmpty else { return nil }
        sessions = snapshot.gaugeTotal(SkirmishMetrics.serverSessions)
        matches = snapshot.gaugeTotal(SkirmishMetrics.serverMatches)
        packetsReceived = snapshot.counterTotal(SkirmishMetrics.serverPacketsReceived)
        packetsSent = snapshot.counterTotal(SkirmishMetrics.serverPacketsSent)
        bytesReceived = snapshot.counterTotal(SkirmishMetrics.serverBytesReceived)
        bytesSent = snapshot.counterTotal(SkirmishMetrics.serverBytesSent)
        challenges = snapshot.counterTotal(SkirmishMetrics.serverChallenges)
        resumes = snapshot.counterTotal(SkirmishMetrics.serverResumes)
        ticks = snapshot.counterTotal(SkirmishMetrics.serverTicks)
        lateTicks = snapshot.counterTotal(SkirmishMetrics.serverLateTicks)
        forfeits = snapshot.counterTotal(SkirmishMetrics.serverForfeits)
        let started = snapshot.counterBreakdown(SkirmishMetrics.serverMatchesStarted, by: "game")
        let completed = snapshot.counterBreakdown(SkirmishMetrics.serverMatchesCompleted, by: "game")
        let abandoned = snapshot.counterBreakdown(SkirmishMetrics.serverMatchesAbandoned, by: "game")
        var byGame: [String: [UInt64]] = [:]
        for game in Set(started.keys).union(completed.keys).union(abandoned.keys) {
            byGame[game] = [started[game] ?? 0, completed[game] ?? 0, abandoned[game] ?? 0]
        }
        matchesByGame = byGame
        desyncs = snapshot.counterBreakdown(SkirmishMetrics.serverDesyncs, by: "game")
        rejections = snapshot.counterBreakdown(SkirmishMetrics.serverRejectedPackets, by: "reason")
        let duration = snapshot.histogram(SkirmishMetrics.serverTickSeconds)
        tickDurationP50 = duration?.quantile(0.5)
        tickDurationP99 = duration?.quantile(0.99)
        tickDurationMax = duration?.quantile(1)
        scrapedFrom = nil
        var bandwidth: [String: TrafficFigures] = [:]
        for game in Set(
            snapshot.series(of: SkirmishMetrics.serverMatchBytesPerSecond).compactMap({ $0.labels["game"] }))
        {
            let figures = TrafficFigures(SkirmishMetrics.serverMatchBytesPerSecond, in: snapshot, where: ["game": game])
            if figures.sent.samples + figures.received.samples > 0 { bandwidth[game] = figures }
        }
        matchBytesPerSecond = bandwidth
    }

    /// The report's "Server" table: one row per figure.
    public var table: ReportSummary.Table {
        func ms(_ seconds: Double?) -> String {
            seconds.map { String(format: "%.2f ms", $0 * 1_000) } ?? "–"
        }
        var rows: [[String]] = [
            ["sessions / matches at the end", "\(Int(sessions)) / \(Int(matches))"],
            ["packets received / sent", "\(packetsReceived) / \(packetsSent)"],
            ["bytes received / sent", "\(bytesReceived) / \(bytesSent)"],
            ["challenges / resumes", "\(challenges) / \(resumes)"],
            ["ticks (late)", "\(ticks) (\(lateTicks))"],
            [
                "tick time p50 / p99 / max",
                [tickDurationP50, tickDurationP99, tickDurationMax].map(ms).joined(separator: " / "),
            ],
            ["forfeits", "\(forfeits)"],
            ["desyncs (Suns tallies)", "\(desyncs.values.reduce(0, +))"],
        ]
        for (game, counts) in matchesByGame.sorted(by: { $0.key < $1.key }) where counts.contains(where: { $0 > 0 }) {
            rows.append([
                "\(game) matches started / completed / abandoned", counts.map(String.init).joined(separator: " / "),
            ])
        }
        let title = scrapedFrom.map { "Server (scraped from \($0))" } ?? "Server (embedded)"
        return ReportSummary.Table(title, columns: ["figure", "value"], rows: rows)
    }

    /// The report's "Server rejections by reason" table, largest first.
    public var rejectionsTable: ReportSummary.Table {
        ReportSummary.Table(
            "Server rejections by reason", columns: ["reason", "packets"],
            rows: rejections.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { [$0.key, "\($0.value)"] },
            empty: "no packet rejected")
    }
}
