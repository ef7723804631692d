import SkirmishGames

/// What an ``Opponent`` decided on its last ``Opponent/decide(now:)``, in its own frame (its goal at the bottom).
///
/// For display (a practice page can draw the predicted crossing) and for evaluation (`skirmish ai-eval` compares
/// ``crossingX`` with where the puck really crossed).
public struct Plan: Sendable, Hashable {
    /// What the opponent is trying to do this decision.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// No play yet, a goal pause, or the match is over: back to the start spot.
        case waiting
        /// The puck is not coming: stand between it and the goal.
        case guarding
        /// Moving to meet the puck behind its predicted path.
        case intercepting
        /// Driving through the puck toward the open side of the far goal.
        case striking
        /// Standing where the puck crosses the defence line: a shot over a slow link (held until it has crossed), or a
        /// puck that is coming but cannot be met in time within the speed cap (best effort at its crossing point).
        case blocking
    }

    /// Waiting, guarding, intercepting, striking or blocking.
    public var mode: Mode
    /// Where the paddle is headed before blending and the speed cap.
    public var target: PuckTarget
    /// Where the puck's free path crosses the defence line (``Opponent/defenceLine``), when it does within the
    /// horizon; otherwise the guard position's x, the opponent's best guess.
    public var crossingX: Float
    /// Whether ``crossingX`` comes from a predicted path (rather than a guard position).
    public var crossingPredicted: Bool
    /// The server tick of that crossing, when predicted.
    public var crossingTick: UInt32?
    /// Side-wall bounces on the predicted path before the crossing.
    public var bounces: Int
    /// The tick of the snapshot the plan was made from (0 before the first).
    public var snapshotTick: UInt32
    /// Ticks simulated from that snapshot to the tick this decision takes effect on the server.
    public var lookahead: Int
    /// The unit direction the opponent means to send the puck in (own frame, up the table is negative y) when it is
    /// going for it — intercepting or striking; `nil` otherwise.
    public var aim: PuckTarget?

    /// A plan as ``Opponent/decide(now:)`` makes it; built directly only by tests and displays.
    public init(
        mode: Mode, target: PuckTarget, crossingX: Float, crossingPredicted: Bool, crossingTick: UInt32?,
        bounces: Int, snapshotTick: UInt32, lookahead: Int
    ) {
        self.mode = mode
        self.target = target
        self.crossingX = crossingX
        self.crossingPredicted = crossingPredicted
        self.crossingTick = crossingTick
        self.bounces = bounces
        self.snapshotTick = snapshotTick
        self.lookahead = lookahead
    }

    static let initial = Plan(
        mode: .waiting, target: PuckTarget(x: 160, y: 400), crossingX: 160, crossingPredicted: false,
        crossingTick: nil, bounces: 0, snapshotTick: 0, lookahead: 0)
}
