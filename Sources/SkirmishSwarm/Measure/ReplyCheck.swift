import SkirmishWire

/// The checks the runtime and the built-in behaviours make on every reply: what a correct server does.
///
/// Each is counted per reply in `skirmish_checks_total{check}` and, when broken, in
/// `skirmish_checks_failed_total{check}`, labelled with its ``name``. Custom behaviours add their own, by name,
/// through ``AgentContext/check(_:passed:)``.
public enum ReplyCheck: Int, CaseIterable, Sendable {
    /// Every message from the server is one this game's client can receive (a control message, or one of the
    /// game's own).
    case replyType
    /// A game message fits the state of the game: in Snap, no activation, card, snap call or game over before the
    /// deal.
    case replyState
    /// A Welcome's tick rate is the one the protocol defines (60 Hz).
    case welcomeTickRate
    /// A Puck score never goes down within a match: each newer snapshot's and each goal's score is at least the last.
    case scoreMonotonic
    /// A Snap game's announced winner is the player the replica's piles make the winner.
    case snapOutcome

    /// The `check` label: `reply_type`, `welcome_tick_rate`, `score_monotonic`, `snap_outcome`.
    public var name: String {
        switch self {
        case .replyType: "reply_type"
        case .replyState: "reply_state"
        case .welcomeTickRate: "welcome_tick_rate"
        case .scoreMonotonic: "score_monotonic"
        case .snapOutcome: "snap_outcome"
        }
    }

    /// The tick rate a Welcome must announce.
    public static let expectedTickRate: UInt16 = 60

    /// The checks every legitimate bot of `game` makes (created at 0 with the persona's series).
    static func builtIn(_ game: GameKind) -> [ReplyCheck] {
        switch game {
        case .puck: [.replyType, .welcomeTickRate, .scoreMonotonic]
        case .snap: [.replyType, .replyState, .welcomeTickRate, .snapOutcome]
        case .suns: [.replyType, .welcomeTickRate]
        // A game added by a program announces its own tick rate; its behaviour makes its own checks.
        default: [.replyType]
        }
    }
}
