import SkirmishWire

/// An ``Opponent`` whose skill an ``AdaptiveDifficulty`` sets as the match goes: the practice page's `adaptive`
/// choice.
///
/// Drive it exactly as an ``Opponent``: every snapshot goes to the controller as well, and when the controller moves
/// the skill the opponent is reconfigured (``Opponent/reconfigure(_:)``) with
/// ``OpponentConfiguration/init(skill:)`` of it before its next decision.
public struct AdaptiveOpponent: Sendable {
    /// The opponent as it plays now.
    public private(set) var opponent: Opponent
    /// What sets its skill.
    public private(set) var controller: AdaptiveDifficulty

    /// An opponent for `seat` starting at `controller`'s skill; `seed` makes its aim noise reproducible.
    public init(seat: Int, controller: AdaptiveDifficulty = AdaptiveDifficulty(), seed: UInt64 = 1) {
        self.controller = controller
        opponent = Opponent(seat: seat, configuration: OpponentConfiguration(skill: controller.skill), seed: seed)
    }

    /// The skill it plays at now.
    public var skill: Double { controller.skill }

    /// ``Opponent/observe(_:at:)``, and the controller's turn.
    public mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {
        opponent.observe(snapshot, at: time)
        if let skill = controller.observe(snapshot, at: time) {
            opponent.reconfigure(OpponentConfiguration(skill: skill))
        }
    }

    /// ``Opponent/observeRoundTrip(_:at:)``.
    public mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {
        opponent.observeRoundTrip(roundTrip, at: time)
    }

    /// ``Opponent/decide(now:)``.
    public mutating func decide(now: Instant) -> PaddleState { opponent.decide(now: now) }
}

extension AdaptiveOpponent: PuckAgent {
    package mutating func act(now: Instant) -> PaddleState? { decide(now: now) }

    package func predictedPuck(atTick tick: UInt32) -> TableSnapshot.Puck? { opponent.predictedPuck(atTick: tick) }
}
