import SkirmishWire

/// The state hashes of a Snap table: one per part, so a mismatch says where, and the combined one sent as
/// `stateHash` in `CardTurned`, `PlayerCalledSnap` and `SnapGameOver`.
///
/// FNV-1a over seat-absolute (not viewer-relative) order, so every seat computes the same values:
/// - `deck`: seat count (u8), then per seat the hand's count (u8) and cards (u8 each, top first);
/// - `piles`: per seat the pile's count (u8) and cards (u8 each, bottom first);
/// - `turn`: turn (u8), winner (u8, 255 = none), turns taken (u32), pair claimed (u8 0/1);
/// - `combined`: the three serialisations concatenated in that order.
public struct SnapHashes: Sendable, Hashable {
    public var deck: UInt32
    public var piles: UInt32
    public var turn: UInt32
    public var combined: UInt32

    public init(deck: UInt32, piles: UInt32, turn: UInt32, combined: UInt32) {
        self.deck = deck
        self.piles = piles
        self.turn = turn
        self.combined = combined
    }
}
