import SkirmishWire

/// A swarm script (`bots/*.yaml`): the load profile, the weighted personas and the pass/fail thresholds.
///
/// Built only by ``ScriptLoader``, which validates every field; a `Script` value is always runnable.
public struct Script: Sendable, Hashable {
    /// The script's `name`: the first part of every run id and the `script` of the run's settings.
    public var name: String
    /// Free text from the `description` key, shown in reports.
    public var summary: String
    /// The load profile's stages, run in order (the single-profile form; empty when the script has ``scenarios``).
    public var profile: [Stage]
    /// The kinds of bot, in script order, every scenario's; each new bot takes the next persona of its scenario by
    /// weight.
    public var personas: [Persona]
    /// The script's `scenarios`, each with its own personas, load model and start, all running at once; empty for
    /// the single-profile form (``profile`` and ``personas`` at the top), which ``plannedScenarios`` reads as one.
    public var scenarios: [Scenario] = []
    /// The pass/fail conditions judged on the run, in script order.
    public var thresholds: [Threshold]
    /// The protocol every persona speaks (`protocol:`, `snap` by default).
    public var protocolName: String
    /// The protocol's options from the script's `protocol:` block, decoded by the plug-in's catalogue entry.
    public var protocolOptions: OptionValue
    /// A fingerprint of the script's text as written (before `${NAME}` was replaced): 16 hex digits of FNV-1a,
    /// set by ``ScriptLoader``. Two runs with the same digest ran the same script, whatever their variables; `nil`
    /// for a script a program built.
    public var digest: String?
    /// The text as written, set by ``ScriptLoader``: what a run copies into its results folder as `script.yaml`,
    /// so that the folder says what ran and `skirmish merge` can read it again. `nil` for a script a program built.
    public var text: String?
    /// The variables the text reads (`${NAME}`) that were set when it loaded, with their values: with ``text``,
    /// everything needed to load the same script again. Empty when it reads none. Kept in memory only: a run writes
    /// their names and ``variablesDigest``, never the values (a script may read a secret).
    public var variables: [String: String] = [:]

    /// A fingerprint of ``variables`` (FNV-1a of each `name=value` line, sorted by name), so that two runs can tell
    /// whether they read the same values without writing them; `nil` when the script reads none. A check, not a
    /// protection: a guessable value can be found from it.
    public var variablesDigest: String? {
        guard !variables.isEmpty else { return nil }
        return Self.digest(of: variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined())
    }

    /// A script; the loader builds these, a program may too.
    public init(
        name: String, summary: String = "", profile: [Stage], personas: [Persona], thresholds: [Threshold] = [],
        protocolName: String = "snap", protocolOptions: OptionValue = .none
    ) {
        self.name = name
        self.summary = summary
        self.profile = profile
        self.personas = personas
        self.thresholds = thresholds
        self.protocolName = protocolName
        self.protocolOptions = protocolOptions
    }

    /// The ``digest`` of `text`: FNV-1a (64-bit) of its UTF-8 bytes, as 16 lowercase hex digits. A fingerprint to
    /// tell scripts apart, not a defence against someone forging one.
    public static func digest(of text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The scenarios the run plays: the script's, or for the single-profile form one scenario holding its profile and
    /// every persona, named after the script.
    public var plannedScenarios: [Scenario] {
        scenarios.isEmpty
            ? [Scenario(name: name, profile: profile, personas: 0..<personas.count)] : scenarios
    }

    /// When the last scenario ends.
    public var duration: Duration {
        plannedScenarios.reduce(.zero) { longest, scenario in
            max(longest, scenario.start + scenario.profile.reduce(.zero) { $0 + $1.length })
        }
    }

    /// Every tag name any persona carries, sorted: the extra labels of the run's bot series.
    public var tagNames: [String] { Array(Set(personas.flatMap(\.tags.keys))).sorted() }

}

/// One of a script's `scenarios`: personas with a load model of their own, starting at an offset into the run.
///
/// Every scenario runs at the same time as the others, from its `start`; its bots are its own personas only, dealt
/// by their weights within the scenario. Its `tags`, and a `scenario` tag holding its name, label every series its
/// bots produce, so thresholds can judge it alone (`rtt_p99{scenario:lobby-rush}`).
public struct Scenario: Sendable, Hashable {
    /// The scenario's `name`; unique in the script.
    public var name: String
    /// How long after the run's start it begins.
    public var start: Duration
    /// Its load profile (closed `ramp`/`hold` stages, open `arrive` stages), run in order from ``start``.
    public var profile: [Stage]
    /// Its personas: positions in ``Script/personas``.
    public var personas: Range<Int>
    /// The tags every one of its personas carries (a persona's own tag of the same name wins).
    public var tags: [String: String]

    /// A scenario of `personas` (positions in the script's list).
    public init(
        name: String, start: Duration = .zero, profile: [Stage], personas: Range<Int>, tags: [String: String] = [:]
    ) {
        self.name = name
        self.start = start
        self.profile = profile
        self.personas = personas
        self.tags = tags
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

/// The name of a behaviour a persona plays, as its protocol's catalogue registered it (`chaser`, `runner`, a
/// program's own).
public struct BehaviorName: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The name as a script writes it.
    public var rawValue: String

    /// A behaviour name; whether it exists is checked when a script is loaded, against the protocol's catalogue.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `chaser`: Puck; goes for the puck, hitting it up the table.
    public static let chaser = BehaviorName(rawValue: "chaser")
    /// `defender`: Puck; guards its goal mouth.
    public static let defender = BehaviorName(rawValue: "defender")
    /// `ai`: Puck; the AI opponent of SkirmishOpponent at the persona's `difficulty` (a preset or `adaptive`).
    public static let ai = BehaviorName(rawValue: "ai")
    /// `idle`: any game; holds a seat and its connection and never plays.
    public static let idle = BehaviorName(rawValue: "idle")
    /// `chatter`: plays the game's default behaviour and chats every `chat_every`.
    public static let chatter = BehaviorName(rawValue: "chatter")
    /// `snap-player`: Snap; signs in, turns its card when activated, calls snap after a reaction time.
    public static let snapPlayer = BehaviorName(rawValue: "snap-player")
    /// `suns-player`: Suns; proposes a layout, strikes at open suns, relays captures and sends its tally.
    public static let sunsPlayer = BehaviorName(rawValue: "suns-player")
    /// `reconnector`: plays, drops its socket every `reconnect_every` and resumes after `offline_for`.
    public static let reconnector = BehaviorName(rawValue: "reconnector")
    /// `rogue`: sends malformed, replayed, wrong-direction and flooding packets at `rogue_rate`.
    public static let rogue = BehaviorName(rawValue: "rogue")
    /// `human`: Puck; a model of a person with a mouse (reaction delay, aim error, a hand's speed) at its `skill`.
    public static let human = BehaviorName(rawValue: "human")

    /// The name as a script writes it.
    public var description: String { rawValue }
}

/// A normal distribution of reaction times, truncated at zero.
public struct ReactionSpec: Sendable, Hashable {
    /// The mean reaction time.
    public var mean: Duration
    /// The standard deviation; draws below zero become zero.
    public var stddev: Duration

    /// A normal distribution with `mean` and `stddev`.
    public init(mean: Duration, stddev: Duration) {
        self.mean = mean
        self.stddev = stddev
    }
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
///
/// The runtime's own keys are fields here; what the persona tells its protocol (a SNAP game and seats, a DDNet
/// name) and its behaviour (an AI's difficulty) are decoded by the catalogue's entries into ``connection`` and
/// ``options``.
public struct Persona: Sendable, Hashable {
    /// The persona's `name`: the `persona` label of its bots' series and its row in the summary.
    public var name: String
    /// Relative share of the bots; at least 1.
    public var weight: Int
    /// The `game` label of its bots' series: a SNAP game's name, or the protocol's own name.
    public var gameName: String
    /// The behaviour its bots run for each match.
    public var behavior: BehaviorName
    /// How often the bot sends input (Puck `PaddleState`s, Suns strikes, DDNet inputs, ENet payloads).
    public var inputRate: Double
    /// Emulated latency, jitter, loss, duplication and reordering on its bots' side; perfect by default.
    public var link: LinkProfile
    /// The transport its bots use; `nil` uses the target's.
    public var transport: Transport?
    /// A server of its own (`target: udp://host:port`); `nil` uses the run's.
    public var target: Target?
    /// The program each bot runs, in order; by default match after match.
    public var steps: [Step]
    /// The persona's connection configuration, decoded by its protocol (`SnapConnection.Configuration`, …).
    public var connection: OptionValue
    /// The behaviour's own options, decoded by its catalogue entry.
    public var options: OptionValue
    /// Whether its traffic counts as legitimate: a hostile behaviour's (`rogue`) is excluded from the figures.
    public var isLegit: Bool
    /// The persona's `tags` (`{tier: premium, region: eu}`): extra labels on every series its bots produce, which
    /// thresholds may filter on (`rtt_p99{tier:premium}`).
    public var tags: [String: String]

    /// A persona; the defaults are a script's (one share, a perfect link, match after match).
    public init(
        name: String, weight: Int = 1, gameName: String, behavior: BehaviorName, inputRate: Double = 2,
        link: LinkProfile = .perfect, transport: Transport? = nil, target: Target? = nil,
        steps: [Step] = [.playUntilMatchOver, .repeat(times: nil)], connection: OptionValue = .none,
        options: OptionValue = .none, isLegit: Bool = true, tags: [String: String] = [:]
    ) {
        self.tags = tags
        self.name = name
        self.weight = weight
        self.gameName = gameName
        self.behavior = behavior
        self.inputRate = inputRate
        self.link = link
        self.transport = transport
        self.target = target
        self.steps = steps
        self.connection = connection
        self.options = options
        self.isLegit = isLegit
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
    /// The series the figure is read from, by label (`persona`, `game`, `protocol`): `rtt_p99{persona:chaser}`
    /// judges the chaser's round trips alone. Empty: every legitimate persona's.
    public var filter: [String: String]
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
        abortOnFail: Bool = false, delayAbortEval: Duration = .zero, filter: [String: String] = [:]
    ) {
        self.metric = metric
        self.filter = filter
        self.comparison = comparison
        self.limit = limit
        self.text = text
        self.window = window
        self.abortOnFail = abortOnFail
        self.delayAbortEval = delayAbortEval
    }

    /// Whether `value` passes.
    public func holds(_ value: Double) -> Bool { comparison.holds(value, limit) }

    /// The figure as a script names it, with its filter: `rtt_p99`, `rtt_p99{persona:chaser}`.
    public var name: String {
        guard !filter.isEmpty else { return metric.name }
        return metric.name + "{"
            + filter.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
            .joined(separator: ",") + "}"
    }

    /// `rtt_p99 < 120ms`, `rtt_p99{persona:chaser} < 80ms`, with `over every 5m window` when windowed.
    public var description: String {
        "\(name) \(text)" + (window.map { " over every \($0.scriptText) window" } ?? "")
    }
}
