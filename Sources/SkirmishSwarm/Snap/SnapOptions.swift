import SkirmishOpponent
import SkirmishScript
import SkirmishWire

/// The options of SNAP's built-in behaviours, as a script's persona keys give them (`difficulty:`, `snap_reaction:`,
/// `chat_every:`, `reconnect_every:`, `offline_for:`, `rogue_rate:`); each behaviour reads its own from
/// `context.persona.options`.
public enum SnapOptions {
    /// `ai`: the opponent's strength.
    public struct AI: Sendable, Hashable {
        /// The opponent's preset, or `adaptive`.
        public var difficulty: Opponent.Level

        /// An AI of `difficulty`.
        public init(difficulty: Opponent.Level = .medium) { self.difficulty = difficulty }
    }

    /// `human`: the modelled person's level (`beginner`, `casual`, `skilled`).
    package struct Human: Sendable, Hashable {
        /// The level.
        package var skill: HumanPlayer.Skill

        /// A human-like player of `skill` (casual by default).
        package init(skill: HumanPlayer.Skill = .casual) { self.skill = skill }
    }

    /// `snap-player`: its reaction time to an activation or a matching pair.
    public struct SnapPlayer: Sendable, Hashable {
        /// The reaction time's distribution.
        public var reaction: ReactionSpec

        /// A player with `reaction` (0.6 s ± 0.15 s by default).
        public init(reaction: ReactionSpec = ReactionSpec(mean: .milliseconds(600), stddev: .milliseconds(150))) {
            self.reaction = reaction
        }
    }

    /// `chatter`: time between chat lines.
    public struct Chatter: Sendable, Hashable {
        /// Drawn uniformly for each line.
        public var every: ClosedRange<Duration>

        /// A chatter every `every` (2–5 s by default).
        public init(every: ClosedRange<Duration> = .seconds(2) ... .seconds(5)) { self.every = every }
    }

    /// `reconnector`: time connected before dropping, and offline before resuming.
    public struct Reconnector: Sendable, Hashable {
        /// Connected time before each drop.
        public var every: ClosedRange<Duration>
        /// Offline time before each resume.
        public var offlineFor: ClosedRange<Duration>

        /// A reconnector (every 10–20 s, offline 1–3 s by default).
        public init(
            every: ClosedRange<Duration> = .seconds(10) ... .seconds(20),
            offlineFor: ClosedRange<Duration> = .seconds(1) ... .seconds(3)
        ) {
            self.every = every
            self.offlineFor = offlineFor
        }
    }

    /// `rogue`: hostile packets per second.
    public struct Rogue: Sendable, Hashable {
        /// Packets per second.
        public var rate: Double

        /// A rogue at `rate` packets a second (20 by default).
        public init(rate: Double = 20) { self.rate = rate }
    }
}
