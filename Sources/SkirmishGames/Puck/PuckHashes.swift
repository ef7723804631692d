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
    /// FNV-1a of the puck's x, y, vx, vy, angle and spin.
    public var puck: UInt32
    /// FNV-1a of both paddles' x, y, vx, vy, seat 0 first.
    public var paddles: UInt32
    /// FNV-1a of both scores, the phase and the tick.
    public var score: UInt32
    /// FNV-1a of all three serialisations concatenated: the value sent as `TableSnapshot.stateHash`.
    public var combined: UInt32

    /// Hashes as computed elsewhere (by ``PuckMatch`` or a replica), to compare part by part.
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
