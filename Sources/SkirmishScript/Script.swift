import SkirmishWire

/// A swarm script (`bots/*.yaml`): the load profile, the weighted personas and the pass/fail thresholds.
///
/// Built only by ``ScriptLoader``, which validates every field; a `Script` value is always runnable.
public struct Script: Sendable, Hashable {
    public var name: String
    /// Free text from the `description` key, shown in reports.
    public var summary: String
    public var profile: [Stage]
    public var personas: [Persona]
    public var thresholds: [Threshold]

    /// Total length of the profile.
    public var duration: Duration { profile.reduce(.zero) { $0 + $1.length } }

    /// The most bots the closed-model stages ask for at once.
    public var peakConcurrency: Int {
        profile.reduce(0) { peak, stage in
            if case .ramp(let to, _) = stage { return max(peak, to) }
            return peak
        }
    }
}

/// One stage of a load profile.
public enum Stage: Sendable, Hashable {
    /// Closed model: move the number of concurrent bots linearly to `to` over `over`.
    case ramp(to: Int, over: Duration)
    /// Closed model: keep the current number of bots for `for`.
    case hold(for: Duration)
    /// Open model: start `rate` new bots per second for `for`, whatever the server's speed; each plays its steps
    /// and leaves. `max` caps how many may be alive at once (arrivals beyond it are counted as dropped).
    case arrive(rate: Double, for: Duration, max: Int)

    public var length: Duration {
        switch self {
        case .ramp(_, let over): over
        case .hold(let duration): duration
        case .arrive(_, let duration, _): duration
        }
    }
}

/// The name of a behaviour a persona plays: one of the built-in ones, or one a program registered (see
/// `BehaviorRegistry` and ``ScriptLoader/init(customBehaviors:games:)``).
public struct BehaviorName: RawRepresentable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let chaser = BehaviorName(rawValue: "chaser")
    public static let defender = BehaviorName(rawValue: "defender")
    public static let ai = BehaviorName(rawValue: "ai")
    public static let idle = BehaviorName(rawValue: "idle")
    public static let chatter = BehaviorName(rawValue: "chatter")
    public static let snapPlayer = BehaviorName(rawValue: "snap-player")
    public static let sunsPlayer = BehaviorName(rawValue: "suns-player")
    public static let reconnector = BehaviorName(rawValue: "reconnector")
    public static let rogue = BehaviorName(rawValue: "rogue")

    /// The built-in behaviours, in the order `--help` and error hints list them.
    public static let allCases: [BehaviorName] = [
        .chaser, .defender, .ai, .idle, .chatter, .snapPlayer, .sunsPlayer, .reconnector, .rogue,
    ]

    public var description: String { rawValue }

    /// Games a built-in behaviour can play; `nil` means any (and every custom behaviour's games come from its
    /// registration).
    var games: Set<GameKind>? {
        switch self {
        case .chaser, .defender, .ai: [.puck]
        case .snapPlayer: [.snap]
        case .sunsPlayer: [.suns]
        default: nil
        }
    }

    /// The behaviour a persona gets when it names a built-in game but no behaviour; `nil` for any other game, whose
    /// behaviours are a program's own.
    static func `default`(for game: GameKind) -> BehaviorName? {
        switch game {
        case .puck: .chaser
        case .snap: .snapPlayer
        case .suns: .sunsPlayer
        default: nil
        }
    }
}

/// The AI opponent's strength.
public enum Difficulty: String, Sendable, Hashable, CaseIterable {
    case easy, medium, hard, expert
}

/// Emulated network conditions on a bot's side of the link, both directions.
public struct LinkSpec: Sendable, Hashable {
    public var latency: Duration = .zero
    public var jitter: Duration = .zero
    /// Fractions in [0, 1].
    public var loss: Double = 0
    public var duplicate: Double = 0
    public var reorder: Double = 0

    public init() {}

    public var isPerfect: Bool { self == LinkSpec() }
}

/// A normal distribution of reaction times, truncated at zero.
public struct ReactionSpec: Sendable, Hashable {
    public var mean: Duration
    public var stddev: Duration
}

/// One step of a persona's program.
public enum Step: Sendable, Hashable {
    /// Send a chat line to the match.
    case chat(String)
    /// Play until the match ends.
    case playUntilMatchOver
    /// Play for a while, then leave the match.
    case play(for: Duration)
    /// Wait a random time in the range.
    case think(ClosedRange<Duration>)
    /// Leave the match and disconnect, then join again (a reconnect).
    case reconnect
    /// Go back to the first step (`repeat: true`), or repeat the program a number of times in all.
    case `repeat`(times: Int?)
    /// Disconnect and end this bot.
    case quit
}

/// A kind of bot: what it plays, how, over what link, and in what proportion.
public struct Persona: Sendable, Hashable {
    public var name: String
    /// Relative share of the bots; at least 1.
    public var weight: Int
    public var game: GameKind
    /// The game's name in scripts and metric labels (`game="count"`): the built-in games' own, or the name a game
    /// registered by a program has in the loader's ``ScriptLoader/games``.
    public var gameName: String
    public var behavior: BehaviorName
    /// Seats at the table (Puck and Suns: 2; Snap: 2–4).
    public var seats: Int
    /// How often the bot sends input (Puck `PaddleState`s; Suns strikes).
    public var inputRate: Double
    public var link: LinkSpec
    public var transport: Transport?
    public var difficulty: Difficulty?
    public var snapReaction: ReactionSpec?
    /// `chatter`: time between chat lines.
    public var chatEvery: ClosedRange<Duration>?
    /// `reconnector`: time connected before dropping, and time offline before resuming.
    public var reconnectEvery: ClosedRange<Duration>?
    public var offlineFor: ClosedRange<Duration>?
    /// `rogue`: hostile packets per second.
    public var rogueRate: Double?
    public var steps: [Step]

    /// Rogue traffic is excluded from the legitimate figures.
    public var isLegit: Bool { behavior != .rogue }

    /// A persona; the defaults are a script's (two seats, 30 Hz Puck or 2 Hz other inputs, a perfect link, match
    /// after match).
    public init(
        name: String, weight: Int = 1, game: GameKind, gameName: String? = nil, behavior: BehaviorName, seats: Int = 2,
        inputRate: Double? = nil, link: LinkSpec = LinkSpec(), transport: Transport? = nil,
        difficulty: Difficulty? = nil, snapReaction: ReactionSpec? = nil, chatEvery: ClosedRange<Duration>? = nil,
        reconnectEvery: ClosedRange<Duration>? = nil, offlineFor: ClosedRange<Duration>? = nil,
        rogueRate: Double? = nil, steps: [Step] = [.playUntilMatchOver, .repeat(times: nil)]
    ) {
        self.name = name
        self.weight = weight
        self.game = game
        self.gameName = gameName ?? game.description
        self.behavior = behavior
        self.seats = seats
        self.inputRate = inputRate ?? (game == .puck ? 30 : 2)
        self.link = link
        self.transport = transport
        self.difficulty = difficulty
        self.snapReaction = snapReaction
        self.chatEvery = chatEvery
        self.reconnectEvery = reconnectEvery
        self.offlineFor = offlineFor
        self.rogueRate = rogueRate
        self.steps = steps
    }
}

/// A pass/fail condition on a run's figures, such as `rtt_p99: "< 120ms"`.
public struct Threshold: Sendable, Hashable, CustomStringConvertible {
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case equal = "=="
        case notEqual = "!="

        package func holds(_ value: Double, _ limit: Double) -> Bool {
            switch self {
            case .less: value < limit
            case .lessOrEqual: value <= limit
            case .greater: value > limit
            case .greaterOrEqual: value >= limit
            case .equal: value == limit
            case .notEqual: value != limit
            }
        }
    }

    public var metric: ThresholdMetric
    public var comparison: Comparison
    /// In the metric's base unit: seconds, a count, a fraction or pixels.
    public var limit: Double
    /// As written in the script, for reports.
    public var text: String
    /// Judge the threshold over every sliding window of this length while the run lasts (each second, once a
    /// whole window has passed), not only over the whole run; `nil` judges the whole run.
    public var window: Duration?
    /// Stop the run as soon as the threshold fails (the run so far, or a window), write everything and exit 99.
    public var abortOnFail: Bool
    /// With ``abortOnFail``: a failure before this much of the run has passed does not stop it (a figure that needs
    /// time to settle, such as `matches_completed > 10`).
    public var delayAbortEval: Duration

    public init(
        metric: ThresholdMetric, comparison: Comparison, limit: Double, text: String, window: Duration? = nil,
        abortOnFail: Bool = false, delayAbortEval: Duration = .zero
    ) {
        self.metric = metric
        self.comparison = comparison
        self.limit = limit
        self.text = text
        self.window = window
        self.abortOnFail = abortOnFail
        self.delayAbortEval = delayAbortEval
    }

    /// Whether `value` passes.
    public func holds(_ value: Double) -> Bool { comparison.holds(value, limit) }

    /// `rtt_p99 < 120ms`, with `over every 5m window` when windowed.
    public var description: String {
        "\(metric.name) \(text)" + (window.map { " over every \($0.scriptText) window" } ?? "")
    }
}
