import SkirmishGames
import SkirmishTelemetry
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

/// The first episodes of a run, shared by every loop of a swarm, and how many log lines the episodes get.
///
/// The first ``capacity`` episodes are kept in full for `summary.json`, and each gets a warning line of its own. Past
/// that, a server that disagrees with every bot would write a line per episode without end (a hostile one made 869
/// lines in 8 s from 24 bots), so the rest are rate-limited as the server's rejections are: at most one line per
/// part per ``interval``, each with the `count` of episodes it stands for; ``owed()`` gives the lines still owed when
/// the run ends, so every episode is in exactly one line's count.
///
/// Touched only when a desync happens, so the lock is off the hot path.
final class DesyncEpisodeLog: Sendable {
    /// Episodes kept in full for `summary.json`, and episodes logged one line each.
    static let capacity = 100
    /// The shortest time between two rate-limited lines of one part.
    static let interval = Duration.seconds(10)

    private struct State {
        var kept: [DesyncEpisode] = []
        var linesInFull = 0
        var limiter = LogRateLimiter<String>(interval: DesyncEpisodeLog.interval)
    }

    private let state = Mutex(State())
    private let clock: @Sendable () -> Duration

    /// - Parameter clock: the time for the rate limit, from any fixed origin (the monotonic clock unless a test
    ///   drives it).
    init(clock: @escaping @Sendable () -> Duration = DesyncEpisodeLog.monotonic) {
        self.clock = clock
    }

    /// Keeps `episode` (when `keep` and fewer than ``capacity`` are kept already) and says how to log it: `nil` for
    /// no line now (a later line counts it); else a line, of its own (`limited` false) or rate-limited, standing for
    /// `count` episodes of its part (this one and those suppressed before it).
    func record(_ episode: DesyncEpisode, keep: Bool = true) -> (count: Int, limited: Bool)? {
        let now = clock()
        return state.withLock { state in
            if keep, state.kept.count < Self.capacity { state.kept.append(episode) }
            guard state.linesInFull >= Self.capacity else {
                state.linesInFull += 1
                return (1, false)
            }
            return state.limiter.record(episode.part, now: now).map { ($0, true) }
        }
    }

    /// The lines owed at the end of a run: each part with episodes no line has counted yet, and how many.
    func owed() -> [(part: String, count: Int)] {
        let now = clock()
        return state.withLock { state in
            state.limiter.due(now: now + Self.interval).map { (part: $0.key, count: $0.count) }
        }
    }

    /// The episodes kept, in the order they were recorded.
    var kept: [DesyncEpisode] { state.withLock { $0.kept } }

    /// Time on the monotonic clock since the first call.
    @Sendable static func monotonic() -> Duration { origin.duration(to: .now) }
    private static let origin = ContinuousClock.now
}
