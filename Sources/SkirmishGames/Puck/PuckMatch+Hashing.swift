import SkirmishWire

extension PuckMatch {
    /// The state hashes of this table.
    public var hashes: PuckHashes {
        var puckHash = FNV1a()
        addPuck(to: &puckHash)
        var paddlesHash = FNV1a()
        addPaddles(to: &paddlesHash)
        var scoreHash = FNV1a()
        addScore(to: &scoreHash)
        var all = FNV1a()
        addPuck(to: &all)
        addPaddles(to: &all)
        addScore(to: &all)
        return PuckHashes(
            puck: puckHash.value, paddles: paddlesHash.value, score: scoreHash.value, combined: all.value)
    }

    private func addPuck(to h: inout FNV1a) {
        h.add(puck.x)
        h.add(puck.y)
        h.add(puck.vx)
        h.add(puck.vy)
        h.add(puck.angle)
        h.add(puck.spin)
    }

    private func addPaddles(to h: inout FNV1a) {
        h.add(paddle0.x)
        h.add(paddle0.y)
        h.add(paddle0.vx)
        h.add(paddle0.vy)
        h.add(paddle1.x)
        h.add(paddle1.y)
        h.add(paddle1.vx)
        h.add(paddle1.vy)
    }

    private func addScore(to h: inout FNV1a) {
        h.add(score0)
        h.add(score1)
        h.add(phase.rawValue)
        h.add(tick)
    }

    /// The combined hash, as sent in `TableSnapshot.stateHash` (computed alone: the server's per-snapshot cost).
    public var stateHash: UInt32 {
        var all = FNV1a()
        addPuck(to: &all)
        addPaddles(to: &all)
        addScore(to: &all)
        return all.value
    }
}
