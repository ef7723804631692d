import SkirmishWire

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
