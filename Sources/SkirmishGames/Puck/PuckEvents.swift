import SkirmishWire

/// What happened during one `PuckMatch` step, in the canonical frame (seats, not sides).
public struct PuckEvents: Sendable, Hashable {
    /// A goal: who scored and the scores after it.
    public struct Goal: Sendable, Hashable {
        /// The seat that scored (0 or 1).
        public var scorer: Int
        /// Seat 0's goals after this one.
        public var score0: UInt8
        /// Seat 1's goals after this one.
        public var score1: UInt8
        /// The match tick at which the goal counts (the tick after the step).
        public var tick: UInt32

        /// The `GoalScored` message for `seat`, in that seat's frame.
        public func message(for seat: Int) -> GoalScored {
            GoalScored(
                tick: tick, scorer: scorer == seat ? .me : .them, myScore: seat == 0 ? score0 : score1,
                theirScore: seat == 0 ? score1 : score0)
        }
    }

    /// The goal scored this step, if any.
    public var goal: Goal?
    /// The winner when the match ended this step (by reaching the winning score or by forfeit).
    public var winner: Int?
    /// Bit `s` is set when seat `s`'s target was refused (non-finite) this step.
    public var refusedTargets: UInt8
    /// Bit `s` is set when seat `s`'s paddle hit the puck this step (the rules' contact flag turned on: both paddles
    /// can hit in one step).
    public var hits: UInt8

    /// The events of one step; the default is a step in which nothing happened.
    public init(goal: Goal? = nil, winner: Int? = nil, refusedTargets: UInt8 = 0, hits: UInt8 = 0) {
        self.goal = goal
        self.winner = winner
        self.refusedTargets = refusedTargets
        self.hits = hits
    }

    /// Whether seat `seat`'s target was refused this step.
    public func refused(seat: Int) -> Bool { refusedTargets & (1 << UInt8(seat & 7)) != 0 }

    /// Whether seat `seat`'s paddle hit the puck this step.
    public func hit(seat: Int) -> Bool { hits & (1 << UInt8(seat & 7)) != 0 }

    /// Whether nothing happened.
    public var isEmpty: Bool { goal == nil && winner == nil && refusedTargets == 0 && hits == 0 }
}
