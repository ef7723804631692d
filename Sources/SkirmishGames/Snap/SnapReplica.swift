import SkirmishWire

/// What a Snap client keeps: its own copy of the game, built from `ServerReady` and `DealCards` and advanced by the
/// server's messages, each of whose state hash it checks against its own.
///
/// Snap messages are reliable and ordered, so every message applies to the state the server had when it sent it.
/// The replica applies each event with the shared rules and compares: the card turned with the top of its own copy
/// of the turner's hand (`piles`: the face-up card differs), a snap call's outcome, the winner, and its own state
/// hash with the one in the message. A replica that reports a desync keeps going with its own state (its
/// ``divergence`` says where, at which turn, and the two values); the caller counts the episode.
public struct SnapReplica: Sendable {
    /// This client's absolute seat.
    public let seat: Int
    /// Peer ids by absolute seat.
    public let peers: [UInt32]
    /// The replica's game.
    public private(set) var game: SnapGame
    /// The last desync found, in detail; set only when a check fails (its `tick` is the turns taken so far).
    public private(set) var divergence: ReplicaDivergence?

    /// Builds the table from `DealCards` (hands in seat order) and finds this client's seat from `ServerReady`
    /// (position 0 is the receiver). Throws `invalidDeal` when the two disagree or the deal is not a full deck.
    /// `turnLimit` must be the server's (the default unless both sides were configured otherwise).
    public init(ready: ServerReady, deal: DealCards, turnLimit: Int = SnapGame.turnLimit) throws(SnapError) {
        let peers = deal.hands.map(\.peer)
        guard ready.players.count == peers.count, let me = ready.players.first(where: { $0.position == 0 }),
            let mySeat = peers.firstIndex(of: me.peer)
        else { throw .invalidDeal }
        let game = try SnapGame(hands: deal.hands.map(\.cards), turnLimit: turnLimit)
        for player in ready.players {
            guard peers.firstIndex(of: player.peer) == game.seat(atPosition: Int(player.position), viewer: mySeat)
            else { throw .invalidDeal }
        }
        self.seat = mySeat
        self.peers = peers
        self.game = game
    }

    /// The absolute seat of a peer, if it is at this table.
    public func seat(of peer: UInt32) -> Int? { peers.firstIndex(of: peer) }

    /// Applies `CardTurned`: the turner must be the replica's seat to turn (`"turn"`), the card turned face up the
    /// top of the replica's copy of its hand (`"piles"`), and the hash after the turn must match (`"hash"`).
    public mutating func apply(_ turned: CardTurned) -> ReplicaCheck {
        divergence = nil
        guard let turner = seat(of: turned.peer), turner == game.turn else {
            return diverged("turn", expected: "turn=\(game.turn)", observed: "peer=\(turned.peer)")
        }
        let card: Card
        do {
            card = try game.turnCard(by: turner)
        } catch {
            return diverged("turn", expected: "no card to turn", observed: "peer=\(turned.peer) card=\(turned.card)")
        }
        guard card == turned.card else {
            return diverged(
                "piles", expected: "seat \(turner) card=\(card)", observed: "seat \(turner) card=\(turned.card)")
        }
        return check(turned.stateHash)
    }

    /// Applies `PlayerCalledSnap`: the replica's own outcome must match (`"outcome"`), then the hash.
    public mutating func apply(_ called: PlayerCalledSnap) -> ReplicaCheck {
        divergence = nil
        guard let caller = seat(of: called.peer) else {
            return diverged("turn", expected: "a seated caller", observed: "peer=\(called.peer)")
        }
        let outcome: SnapOutcome
        do {
            outcome = try game.callSnap(by: caller)
        } catch {
            return diverged("turn", expected: "no call possible", observed: "peer=\(called.peer)")
        }
        guard outcome == called.outcome else {
            return diverged("outcome", expected: "\(outcome)", observed: "\(called.outcome)")
        }
        return check(called.stateHash)
    }

    /// Applies `ActivatePlayer`: the activated peer must be the replica's seat to turn.
    public func applyActivate(_ activate: PeerRef) -> ReplicaCheck {
        seat(of: activate.peer) == game.turn && game.winner == nil ? .ok : .desync(part: "turn")
    }

    /// Applies `OtherClientQuit`: the quitter's cards pass on as ``SnapGame/quit(seat:)`` says.
    public mutating func applyQuit(_ quit: PeerRef) -> ReplicaCheck {
        guard let quitter = seat(of: quit.peer) else { return .desync(part: "turn") }
        do {
            try game.quit(seat: quitter)
        } catch {
            // Quitting twice, or after the end, changes nothing on either side.
        }
        return .ok
    }

    /// Applies `SnapGameOver`: the replica must have the same winner and hash.
    public func apply(_ over: SnapGameOver) -> ReplicaCheck {
        guard let winner = game.winner, peers[winner] == over.winner else { return .desync(part: "turn") }
        return game.stateHash == over.stateHash ? .ok : .desync(part: "hash")
    }

    private mutating func check(_ hash: UInt32) -> ReplicaCheck {
        let mine = game.stateHash
        return mine == hash ? .ok : diverged("hash", expected: "stateHash=\(mine)", observed: "stateHash=\(hash)")
    }

    private mutating func diverged(_ part: String, expected: String, observed: String) -> ReplicaCheck {
        divergence = ReplicaDivergence(
            part: part, tick: UInt32(truncatingIfNeeded: game.turnsTaken), expected: expected, observed: observed)
        return .desync(part: part)
    }
}
