import SkirmishWire

/// The state hashes of a Puck table: one per part, so a mismatch says where, and the combined one sent in
/// `TableSnapshot.stateHash`.
///
/// All are FNV-1a over the canonical frame (seat 0 at the bottom), so both seats' snapshots carry the same hash.
/// The serialisation, big-endian, `Float` as bit patterns:
/// - `puck`: x, y, vx, vy, angle, spin;
/// - `paddles`: seat 0's x, y, vx, vy, then seat 1's;
/// - `score`: score 0, score 1 (u8), phase (u8), tick (u32);
/// - `combined`: the three serialisations above, concatenated in that order (not a hash of hashes, so any single
///   changed byte of the state always changes it).
public struct PuckHashes: Sendable, Hashable {
    public var puck: UInt32
    public var paddles: UInt32
    public var score: UInt32
    public var combined: UInt32

    public init(puck: UInt32, paddles: UInt32, score: UInt32, combined: UInt32) {
        self.puck = puck
        self.paddles = paddles
        self.score = score
        self.combined = combined
    }

    /// The name of the first part that differs from `other` (`"puck"`, `"paddles"`, `"score"`, `"hash"`), or nil.
    public func firstDifference(from other: PuckHashes) -> String? {
        if puck != other.puck { return "puck" }
        if paddles != other.paddles { return "paddles" }
        if score != other.score { return "score" }
        if combined != other.combined { return "hash" }
        return nil
    }
}

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
