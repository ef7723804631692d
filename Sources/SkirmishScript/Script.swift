import SkirmishOpponent
import SkirmishWire

/// A swarm script (`bots/*.yaml`): the load profile, the weighted personas and the pass/fail thresholds.
///
/// Built only by ``ScriptLoader``, which validates every field; a `Script` value is always runnable.
public struct Script: Sendable, Hashable {
    /// The script's `name`: the first part of every run id and the `script` of the run's settings.
    public var name: String
    /// Free text from the `description` key, shown in reports.
    public var summary: String
    /// The load profile's stages, run in order; their lengths add up to ``duration``.
    public var profile: [Stage]
    /// The kinds of bot, in script order; each new bot takes the next persona by weight.
    public var personas: [Persona]
    /// The pass/fail conditions judged on the run, in script order.
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

    /// How long the stage runs.
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
    /// The name as a script writes it (`snap-player`, or a registered behaviour's name).
    public var rawValue: String

    /// A behaviour name; whether it exists is checked when a script is loaded, against the built-ins and registrations.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `chaser`: Puck; goes for the puck, hitting it up the table.
    public static let chaser = BehaviorName(rawValue: "chaser")
    /// `defender`: Puck; guards its goal mouth.
    public static let defender = BehaviorName(rawValue: "defender")
    /// `ai`: Puck; the AI opponent of SkirmishOpponent at the persona's `difficulty`.
    public static let ai = BehaviorName(rawValue: "ai")
    /// `idle`: any game; holds a seat and its connection and never plays.
    public static let idle = BehaviorName(rawValue: "idle")
    /// `chatter`: any game; plays the game's default behaviour and chats every `chat_every`.
    public static let chatter = BehaviorName(rawValue: "chatter")
    /// `snap-player`: Snap; signs in, turns its card when activated, calls snap after a reaction time.
    public static let snapPlayer = BehaviorName(rawValue: "snap-player")
    /// `suns-player`: Suns; proposes a layout, strikes at open suns, relays captures and sends its tally.
    public static let sunsPlayer = BehaviorName(rawValue: "suns-player")
    /// `reconnector`: any game; plays, drops its socket every `reconnect_every` and resumes after `offline_for`.
    public static let reconnector = BehaviorName(rawValue: "reconnector")
    /// `rogue`: any game; sends malformed, replayed, wrong-direction and flooding packets at `rogue_rate`.
    public static let rogue = BehaviorName(rawValue: "rogue")

    /// The built-in behaviours, in the order `--help` and error hints list them.
    public static let allCases: [BehaviorName] = [
        .chaser, .defender, .ai, .idle, .chatter, .snapPlayer, .sunsPlayer, .reconnector, .rogue,
    ]

    /// The name as a script writes it.
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

/// A normal distribution of reaction times, truncated at zero.
public struct ReactionSpec: Sendable, Hashable {
    /// The mean reaction time.
    public var mean: Duration
    /// The standard deviation; draws below zero become zero.
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
    /// The persona's `name`: the `persona` label of its bots' series and its row in the summary.
    public var name: String
    /// Relative share of the bots; at least 1.
    public var weight: Int
    /// The game its bots play.
    public var game: GameKind
    /// The game's name in scripts and metric labels (`game="count"`): the built-in games' own, or the name a game
    /// registered by a program has in the loader's ``ScriptLoader/games``.
    public var gameName: String
    /// The behaviour its bots run for each match.
    public var behavior: BehaviorName
    /// Seats at the table (Puck and Suns: 2; Snap: 2–4).
    public var seats: Int
    /// How often the bot sends input (Puck `PaddleState`s; Suns strikes).
    public var inputRate: Double
    /// Emulated latency, jitter, loss, duplication and reordering on its bots' side; perfect by default.
    public var link: LinkProfile
    /// The transport its bots use; `nil` uses the target's.
    public var transport: Transport?
    /// `ai`: the opponent's strength; `nil` for other behaviours.
    public var difficulty: Opponent.Difficulty?
    /// `snap-player`: its reaction time to an activation or a matching pair; `nil` is 0.6 s ± 0.15 s.
    public var snapReaction: ReactionSpec?
    /// `chatter`: time between chat lines.
    public var chatEvery: ClosedRange<Duration>?
    /// `reconnector`: time connected before dropping, and time offline before resuming.
    public var reconnectEvery: ClosedRange<Duration>?
    /// `reconnector`: how long the bot stays offline before resuming (drawn uniformly from the range).
    public var offlineFor: ClosedRange<Duration>?
    /// `rogue`: hostile packets per second.
    public var rogueRate: Double?
    /// The program each bot runs, in order; by default match after match.
    public var steps: [Step]

    /// Rogue traffic is excluded from the legitimate figures.
    public var isLegit: Bool { behavior != .rogue }

    /// A persona; the defaults are a script's (two seats, 30 Hz Puck or 2 Hz other inputs, a perfect link, match
    /// after match).
    public init(
        name: String, weight: Int = 1, game: GameKind, gameName: String? = nil, behavior: BehaviorName, seats: Int = 2,
        inputRate: Double? = nil, link: LinkProfile = .perfect, transport: Transport? = nil,
        difficulty: Opponent.Difficulty? = nil, snapReaction: ReactionSpec? = nil,
        chatEvery: ClosedRange<Duration>? = nil,
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
    /// How the measured figure is compared with ``Threshold/limit``, as written in the script (`<`, `<=`, `==`, …).
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

    /// The figure judged (`rtt_p99`, `desyncs`, …).
    public var metric: ThresholdMetric
    /// How the figure must compare with ``limit`` for the threshold to hold.
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

    /// A threshold; by default judged over the whole run and never stopping it early.
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
