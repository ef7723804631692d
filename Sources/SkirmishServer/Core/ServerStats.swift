import SkirmishWire

/// The server's own counters, kept by the loop that owns the server and copied out on read.
///
/// Plain arrays indexed by dense enums: the hot path adds to an element and allocates nothing. Match counters are
/// keyed by game (any wire number the registry holds; they change once per match, never per packet).
package struct ServerStats: Sendable, Hashable {
    package var rejected = [UInt64](repeating: 0, count: Rejection.allCases.count)
    package var packetsReceived = [UInt64](repeating: 0, count: MessageType.allCases.count)
    package var packetsSent = [UInt64](repeating: 0, count: MessageType.allCases.count)
    package var bytesReceived: UInt64 = 0
    package var bytesSent: UInt64 = 0
    package var challengesSent: UInt64 = 0
    package var sessionsOpened: UInt64 = 0
    package var sessionsClosed: UInt64 = 0
    /// Sessions the server stopped hearing from (silence, unacknowledged packets): dropped by their own timers,
    /// never by anything a packet said.
    package var sessionsTimedOut: UInt64 = 0
    package var resumes: UInt64 = 0
    /// Matches per game; a game absent here has counted nothing yet.
    package var games: [GameKind: GameCounters] = [:]
    package var forfeits: UInt64 = 0
    package var ticks: UInt64 = 0
    package var lateTicks: UInt64 = 0
    /// When tick 0 of the current 60 Hz schedule was due (`NIODeadline` uptime nanoseconds): tick k is due at
    /// `tickAnchor + k · 10⁹ / 60`. A benchmark in the same process measures snapshot age against it.
    package var tickAnchor: UInt64 = 0
    /// Sessions held now (attached or awaiting resume).
    package var sessions = 0
    /// Sessions awaiting resume now.
    package var detached = 0
    /// Matches running or forming now.
    package var matches = 0

    package init() {}

    package mutating func reject(_ reason: Rejection) { rejected[reason.rawValue] &+= 1 }

    package func rejections(_ reason: Rejection) -> UInt64 { rejected[reason.rawValue] }

    package var totalRejected: UInt64 { rejected.reduce(0, &+) }

    /// Matches of `game` that started.
    package func matchesStarted(_ game: GameKind) -> UInt64 { games[game]?.started ?? 0 }
    /// Matches of `game` that reached their end.
    package func matchesCompleted(_ game: GameKind) -> UInt64 { games[game]?.completed ?? 0 }
    /// Forming matches of `game` that timed out.
    package func matchesAbandoned(_ game: GameKind) -> UInt64 { games[game]?.abandoned ?? 0 }
    /// Matches of `game` whose players' views were compared, and of those the ones that disagreed.
    package func compared(_ game: GameKind) -> UInt64 { games[game]?.compared ?? 0 }
    package func desyncs(_ game: GameKind) -> UInt64 { games[game]?.desyncs ?? 0 }
    /// Matches of `game` whose views disagreed while a capture relayed to one of their players was unacknowledged.
    package func unsettled(_ game: GameKind) -> UInt64 { games[game]?.unsettled ?? 0 }

    /// Matches started, over every game.
    package var totalMatchesStarted: UInt64 { games.values.reduce(0) { $0 &+ $1.started } }
}

/// One game's match counters.
package struct GameCounters: Sendable, Hashable {
    package var started: UInt64 = 0
    package var completed: UInt64 = 0
    /// Forming matches that timed out waiting for players.
    package var abandoned: UInt64 = 0
    /// Matches whose players' views of the end were compared (``MatchNotice/compared(agreed:)``).
    package var compared: UInt64 = 0
    /// Of those, the ones that disagreed.
    package var desyncs: UInt64 = 0
    /// Disagreements not counted as desyncs: a view was sent before its player had acknowledged every message the
    /// server had relayed to it that could change it (a Suns capture), so one was still on its way.
    package var unsettled: UInt64 = 0

    package init() {}
}
