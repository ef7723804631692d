import SkirmishGames
import Synchronization

/// One desync episode as the run's outputs record it: which bot saw which part of which match diverge, from which
/// tick, how long after that tick it noticed, and the two values.
///
/// Written once per episode: as one structured warning in the run's log and, for the first
/// ``DesyncEpisodeLog/capacity`` episodes of the run, in full in `summary.json` (`desyncEpisodes`).
public struct DesyncEpisode: Sendable, Hashable, Codable {
    /// The bot's number in the run.
    public var bot: Int
    /// The persona it plays.
    public var persona: String
    /// The game (`puck`, `snap`, `suns`, …).
    public var game: String
    /// The match it was seated in.
    public var match: UInt32
    /// The part that differed (`puck`, `paddles`, `score`, `phase`, `deck`, `piles`, `turn`, `captures`, …).
    public var part: String
    /// The first tick at which the bot's view and the server's are known to differ (Puck: the tick of the snapshot
    /// that showed it; Snap: the turn count); `nil` for a message without one.
    public var tick: UInt32?
    /// The earliest tick the divergence can have begun at, when known (the tick after the last state that agreed).
    public var since: UInt32?
    /// Seconds from the first divergent tick on the server's clock (as the bot estimates it) to the detection;
    /// `nil` when the message carries no tick.
    public var detectionSeconds: Double?
    /// The bot's smoothed round trip when it detected the episode, in seconds.
    public var rttSeconds: Double
    /// What the bot's replica computed with the shared rules.
    public var expected: String
    /// What the server said.
    public var observed: String

    /// An episode, as the runtime records it.
    public init(
        bot: Int, persona: String, game: String, match: UInt32, part: String, tick: UInt32?, since: UInt32?,
        detectionSeconds: Double?, rttSeconds: Double, expected: String, observed: String
    ) {
        self.bot = bot
        self.persona = persona
        self.game = game
        self.match = match
        self.part = part
        self.tick = tick
        self.since = since
        self.detectionSeconds = detectionSeconds
        self.rttSeconds = rttSeconds
        self.expected = expected
        self.observed = observed
    }
}

/// The first episodes of a run, shared by every loop of a swarm; the rest are only counted (`skirmish_desyncs_total`).
///
/// Touched only when a desync happens, so the lock is off the hot path.
final class DesyncEpisodeLog: Sendable {
    /// Episodes kept in full for `summary.json`.
    static let capacity = 100
    private let state = Mutex<[DesyncEpisode]>([])

    /// Keeps `episode` if fewer than ``capacity`` are kept already.
    func record(_ episode: DesyncEpisode) {
        state.withLock { kept in
            if kept.count < Self.capacity { kept.append(episode) }
        }
    }

    /// The episodes kept, in the order they were recorded.
    var kept: [DesyncEpisode] { state.withLock { $0 } }
}
