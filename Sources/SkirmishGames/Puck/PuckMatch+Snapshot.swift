import SkirmishWire

/// Seat frames: each seat sees itself at the bottom. Seat 1's view is the canonical table turned half a turn,
/// (x, y) → (320 − x, 480 − y) and (vx, vy) → (−vx, −vy); because positions are multiples of 2⁻¹², both
/// directions are exact, so the two views describe the identical table. The puck's angle and spin are the same in
/// both views (a renderer for the top seat adds π when it draws the puck's marking).
extension PuckMatch {
    /// The `TableSnapshot` for `seat`, in that seat's frame, with the canonical ``stateHash``.
    public func snapshot(for seat: Int, lastInputStep: UInt32) -> TableSnapshot {
        let mine = seat == 0 ? paddle0 : paddle1
        let theirs = seat == 0 ? paddle1 : paddle0
        return TableSnapshot(
            tick: tick, lastInputStep: lastInputStep, me: Self.view(mine, seat: seat),
            them: Self.view(theirs, seat: seat), puck: Self.view(puck, seat: seat),
            myScore: score(of: seat), theirScore: score(of: seat == 0 ? 1 : 0), phase: phase, stateHash: stateHash)
    }

    /// The canonical table a snapshot sent to `seat` describes; targets hold the paddles where they are.
    ///
    /// For a snapshot from ``snapshot(for:lastInputStep:)`` the result has exactly the server's state (except the
    /// targets, which are inputs, and `winner` after a forfeit), so stepping it with the server's targets
    /// reproduces the server bit for bit.
    public init(snapshot: TableSnapshot, seat: Int) {
        self.init()
        tick = snapshot.tick
        phase = snapshot.phase
        let me = Self.view(snapshot.me, seat: seat)
        let them = Self.view(snapshot.them, seat: seat)
        paddle0 = seat == 0 ? me : them
        paddle1 = seat == 0 ? them : me
        puck = Self.view(snapshot.puck, seat: seat)
        score0 = seat == 0 ? snapshot.myScore : snapshot.theirScore
        score1 = seat == 0 ? snapshot.theirScore : snapshot.myScore
        if phase == .over {
            if score0 >= PuckConstants.winningScore {
                winner = 0
            } else if score1 >= PuckConstants.winningScore {
                winner = 1
            }
        }
        target0 = PuckTarget(x: paddle0.x, y: paddle0.y)
        target1 = PuckTarget(x: paddle1.x, y: paddle1.y)
    }

    /// The `PuckMatchOver` message for `seat`, once the match is over with a known winner.
    public func matchOver(for seat: Int) -> PuckMatchOver? {
        guard phase == .over, let winner else { return nil }
        return PuckMatchOver(
            winner: winner == seat ? .me : .them, myScore: score(of: seat), theirScore: score(of: seat == 0 ? 1 : 0))
    }

    /// A paddle seen from `seat` (the map is its own inverse).
    static func view(_ p: TableSnapshot.Paddle, seat: Int) -> TableSnapshot.Paddle {
        guard seat != 0 else { return p }
        return TableSnapshot.Paddle(x: K.width - p.x, y: K.height - p.y, vx: -p.vx, vy: -p.vy)
    }

    /// The puck seen from `seat` (the map is its own inverse).
    static func view(_ p: TableSnapshot.Puck, seat: Int) -> TableSnapshot.Puck {
        guard seat != 0 else { return p }
        return TableSnapshot.Puck(
            x: K.width - p.x, y: K.height - p.y, vx: -p.vx, vy: -p.vy, angle: p.angle, spin: p.spin)
    }

    /// A point seen from `seat`.
    public static func view(x: Float, y: Float, seat: Int) -> (x: Float, y: Float) {
        seat == 0 ? (x, y) : (K.width - x, K.height - y)
    }
}
