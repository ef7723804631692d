import SkirmishWire

/// The checks the runtime and the built-in behaviours make on every reply, by name: what a correct server does.
///
/// Each is counted per reply in `skirmish_checks_total{check}` and, when broken, in
/// `skirmish_checks_failed_total{check}`. Custom behaviours add their own through ``AgentContext/check(_:passed:)``.
public enum ReplyCheck {
    /// Every message from the server is a type this game's client can receive (a control message, or one of the
    /// game's own) — the right type in the right session.
    public static let replyType = "reply_type"
    /// A Welcome's tick rate is the one the protocol defines for the game (60 Hz).
    public static let welcomeTickRate = "welcome_tick_rate"
    /// A Puck score never goes down within a match: each newer snapshot's and each goal's score is at least the last.
    public static let scoreMonotonic = "score_monotonic"
    /// A Snap game's announced outcome agrees with the piles the replica kept.
    public static let snapOutcome = "snap_outcome"

    /// The tick rate a Welcome must announce.
    public static let expectedTickRate: UInt16 = 60

    /// The checks every legitimate bot of `game` makes (created at 0 with the persona's series).
    static func builtIn(_ game: GameKind) -> [String] {
        switch game {
        case .puck: [replyType, welcomeTickRate, scoreMonotonic]
        case .snap: [replyType, welcomeTickRate, snapOutcome]
        case .suns: [replyType, welcomeTickRate]
        }
    }
}
