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

extension SnapGame {
    /// The state hashes of this table.
    public var hashes: SnapHashes {
        var deckHash = FNV1a()
        addDeck(to: &deckHash)
        var pilesHash = FNV1a()
        addPiles(to: &pilesHash)
        var turnHash = FNV1a()
        addTurn(to: &turnHash)
        var all = FNV1a()
        addDeck(to: &all)
        addPiles(to: &all)
        addTurn(to: &all)
        return SnapHashes(deck: deckHash.value, piles: pilesHash.value, turn: turnHash.value, combined: all.value)
    }

    /// The combined hash sent in messages.
    public var stateHash: UInt32 {
        var all = FNV1a()
        addDeck(to: &all)
        addPiles(to: &all)
        addTurn(to: &all)
        return all.value
    }

    private func addDeck(to h: inout FNV1a) {
        h.add(UInt8(truncatingIfNeeded: seats))
        for hand in hands {
            h.add(UInt8(truncatingIfNeeded: hand.count))
            for card in hand {
                h.add(card.rawValue)
            }
        }
    }

    private func addPiles(to h: inout FNV1a) {
        for pile in piles {
            h.add(UInt8(truncatingIfNeeded: pile.count))
            for card in pile {
                h.add(card.rawValue)
            }
        }
    }

    private func addTurn(to h: inout FNV1a) {
        h.add(UInt8(truncatingIfNeeded: turn))
        h.add(winner.map { UInt8(truncatingIfNeeded: $0) } ?? 255)
        h.add(UInt32(truncatingIfNeeded: turnsTaken))
        h.add(UInt8(pairClaimed ? 1 : 0))
    }
}
