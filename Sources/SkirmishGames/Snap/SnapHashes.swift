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
    /// FNV-1a of every seat's face-down hand.
    public var deck: UInt32
    /// FNV-1a of every seat's face-up pile.
    public var piles: UInt32
    /// FNV-1a of whose turn it is, the winner, the turns taken and whether the face-up pair was claimed.
    public var turn: UInt32
    /// FNV-1a of all three serialisations concatenated: the `stateHash` on the wire.
    public var combined: UInt32

    /// Hashes as computed elsewhere, to compare part by part.
    public init(deck: UInt32, piles: UInt32, turn: UInt32, combined: UInt32) {
        self.deck = deck
        self.piles = piles
        self.turn = turn
        self.combined = combined
    }
}
