import SkirmishWire

/// Runs one authoritative Snap table: sign-in → server ready → client ready → deal → turns and snap calls → game over.
///
/// Every message a client sends is checked against the stage and, while playing, against whose turn it is; anything
/// else is refused as out of state or out of turn and changes nothing.
package struct SnapRunner: Sendable {
    enum Stage: Sendable, Hashable { case forming, signingIn, readying, dealing, playing, over }

    private(set) var stage = Stage.forming
    private(set) var game: SnapGame
    private var peers: [UInt32]
    private var names: [String?]
    private var ready: [Bool]
    private var dealt: [Bool]
    private var gone: [Bool]

    package init(seats: Int, seed: UInt64, turnLimit: Int = SnapGame.turnLimit) {
        game = SnapGame(seats: seats, seed: seed, turnLimit: turnLimit)
        peers = Array(repeating: 0, count: seats)
        names = Array(repeating: nil, count: seats)
        ready = Array(repeating: false, count: seats)
        dealt = Array(repeating: false, count: seats)
        gone = Array(repeating: false, count: seats)
    }

    package var isOver: Bool { stage == .over }

    /// A player took `seat`; once every seat is taken, sign-in begins.
    package mutating func seatFilled(_ seat: Int, peer: UInt32, into out: inout MatchOutputs) {
        peers[seat] = peer
        guard stage == .forming, !peers.contains(0) else { return }
        stage = .signingIn
        for seat in peers.indices { out.append(MatchOutput(seat: seat, .signInRequest)) }
    }

    package mutating func receive(
        _ message: Message, from seat: Int, into out: inout MatchOutputs
    ) -> MatchVerdict {
        switch (stage, message) {
        case (.signingIn, .signInResponse(let response)):
            guard names[seat] == nil else { return .outOfState }
            // Relayed to every other player in ServerReady: the Hello's rule for names holds here too.
            guard PlayerName.isAcceptable(response.name) else { return .badValue }
            names[seat] = response.name
            guard !names.contains(nil) else { return .accepted }
            stage = .readying
            for viewer in peers.indices {
                let players = peers.indices.map { seat in
                    ServerReady.Player(
                        peer: peers[seat], position: UInt8(game.relativePosition(of: seat, viewer: viewer)),
                        name: names[seat] ?? "")
                }
                out.append(MatchOutput(seat: viewer, .serverReady(ServerReady(players: players))))
            }
        case (.readying, .clientReady):
            guard !ready[seat] else { return .outOfState }
            ready[seat] = true
            guard !ready.contains(false) else { return .accepted }
            stage = .dealing
            let hands = peers.indices.map { DealCards.Hand(peer: peers[$0], cards: game.hands[$0]) }
            for viewer in peers.indices { out.append(MatchOutput(seat: viewer, .dealCards(DealCards(hands: hands)))) }
            out.report(.started)
        case (.dealing, .clientDealtCards):
            guard !dealt[seat] else { return .outOfState }
            dealt[seat] = true
            guard !dealt.contains(false) else { return .accepted }
            stage = .playing
            broadcast(.activatePlayer(PeerRef(peer: peers[game.turn])), into: &out)
        case (.playing, .clientTurnedCard):
            let card: Card
            do throws(SnapError) {
                card = try game.turnCard(by: seat)
            } catch {
                return .outOfTurn
            }
            broadcast(.cardTurned(CardTurned(peer: peers[seat], card: card, stateHash: game.stateHash)), into: &out)
            advance(into: &out)
        case (.playing, .playerShouldSnap):
            let outcome: SnapOutcome
            do throws(SnapError) {
                outcome = try game.callSnap(by: seat)
            } catch {
                return .outOfState
            }
            broadcast(
                .playerCalledSnap(PlayerCalledSnap(peer: peers[seat], outcome: outcome, stateHash: game.stateHash)),
                into: &out)
            advance(into: &out)
        default:
            return .outOfState
        }
        return .accepted
    }

    /// A player quit or dropped. Before the deal the table cannot go on and ends; once cards are dealt, the quitter's
    /// cards pass on as ``SnapGame/quit(seat:)`` says (exactly what every replica does on `OtherClientQuit`), and play
    /// continues among the others until one holds every card.
    package mutating func seatLeft(_ seat: Int, into out: inout MatchOutputs) {
        guard !gone[seat] else { return }
        gone[seat] = true
        guard stage != .over else { return }
        broadcast(.otherClientQuit(PeerRef(peer: peers[seat])), into: &out)
        guard stage == .playing || stage == .dealing else {
            guard stage != .forming else { return }
            stage = .over
            broadcast(.snapGameOver(SnapGameOver(winner: 0, stateHash: game.stateHash)), into: &out)
            return
        }
        do throws(SnapError) {
            try game.quit(seat: seat)
        } catch {
            // Already out of cards or the game already over: nothing changes.
        }
        if stage == .dealing {
            dealt[seat] = true
            guard !dealt.enumerated().contains(where: { !$0.element && !gone[$0.offset] }) else { return }
            stage = .playing
        }
        advance(into: &out)
    }

    private mutating func advance(into out: inout MatchOutputs) {
        if let winner = game.winner {
            stage = .over
            broadcast(.snapGameOver(SnapGameOver(winner: peers[winner], stateHash: game.stateHash)), into: &out)
            out.report(.completed)
        } else {
            broadcast(.activatePlayer(PeerRef(peer: peers[game.turn])), into: &out)
        }
    }

    private func broadcast(_ message: Message, into out: inout MatchOutputs) {
        for seat in peers.indices where !gone[seat] { out.append(MatchOutput(seat: seat, message)) }
    }
}
