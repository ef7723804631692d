import SkirmishGames
import SkirmishWire
import Testing

@Suite struct SnapReplicaTests {
    let peers: [UInt32] = [100, 200, 300, 400]

    func replicas(for game: SnapGame) throws -> [SnapReplica] {
        let turnLimit = game.turnLimit
        let peers = Array(self.peers.prefix(game.seats))
        let names = (0..<game.seats).map { "p\($0)" }
        let deal = game.dealCards(peers: peers)
        return try (0..<game.seats).map { viewer throws(SnapError) in
            try SnapReplica(
                ready: game.serverReady(peers: peers, names: names, viewer: viewer), deal: deal, turnLimit: turnLimit)
        }
    }

    @Test(arguments: 2...4)
    func replicasFedTheServersMessagesReproduceItsHashes(seats: Int) throws {
        var rng = SeededRandom(seed: UInt64(seats) * 77)
        var checks = 0
        var desyncs = 0
        for _ in 0..<20 {
            var server = SnapGame(seats: seats, seed: rng.next(), turnLimit: 400)
            var clients = try replicas(for: server)
            #expect(clients.map(\.seat) == Array(0..<seats))
            var actions = 0
            while server.winner == nil && actions < 2_000 {
                actions += 1
                var results: [ReplicaCheck] = []
                if rng.next() % 4 != 0 {
                    let turner = server.turn
                    let card = try server.turnCard(by: turner)
                    let message = CardTurned(peer: peers[turner], card: card, stateHash: server.stateHash)
                    results = clients.indices.map { clients[$0].apply(message) }
                    if server.winner == nil {
                        let activate = PeerRef(peer: peers[server.turn])
                        results += clients.map { $0.applyActivate(activate) }
                    }
                } else {
                    let caller = Int(rng.next() % UInt64(seats))
                    guard let outcome = try? server.callSnap(by: caller) else { continue }
                    let message = PlayerCalledSnap(peer: peers[caller], outcome: outcome, stateHash: server.stateHash)
                    results = clients.indices.map { clients[$0].apply(message) }
                }
                checks += results.count
                desyncs += results.filter { $0 != .ok }.count
            }
            let winner = try #require(server.winner)
            let over = SnapGameOver(winner: peers[winner], stateHash: server.stateHash)
            desyncs += clients.filter { $0.apply(over) != .ok }.count
            desyncs += clients.filter { $0.game != server }.count
        }
        #expect(checks > 1_000)
        #expect(desyncs == 0)
    }

    @Test func aWrongHashCardOrTurnIsReportedWithItsPart() throws {
        var server = SnapGame(seats: 3, seed: 8)
        let clients = try replicas(for: server)
        let card = try server.turnCard(by: 0)
        var client = clients[1]
        var stale = CardTurned(peer: 100, card: card, stateHash: server.stateHash ^ 1)
        #expect(client.apply(stale) == .desync(part: "hash"))
        client = clients[1]
        let other = Card(rawValue: (card.rawValue + 1) % 52)!
        stale = CardTurned(peer: 100, card: other, stateHash: server.stateHash)
        #expect(client.apply(stale) == .desync(part: "piles"))
        #expect(client.divergence?.expected == "seat 0 card=\(card)")
        #expect(client.divergence?.observed == "seat 0 card=\(other)")
        client = clients[1]
        stale = CardTurned(peer: 200, card: card, stateHash: server.stateHash)
        #expect(client.apply(stale) == .desync(part: "turn"))
        #expect(clients[2].applyActivate(PeerRef(peer: 300)) == .desync(part: "turn"))
        client = clients[2]
        let outcome = PlayerCalledSnap(peer: 300, outcome: .right, stateHash: 0)
        #expect(client.apply(outcome) == .desync(part: "outcome"))
    }

    @Test func aQuitIsMirroredByEveryReplica() throws {
        var server = SnapGame(seats: 3, seed: 12)
        var clients = try replicas(for: server)
        _ = try server.turnCard(by: 0)
        try server.quit(seat: 1)
        for i in clients.indices {
            _ = clients[i].apply(CardTurned(peer: 100, card: server.piles[0][0], stateHash: 0))
            #expect(clients[i].applyQuit(PeerRef(peer: 200)) == .ok)
            #expect(clients[i].game.hashes.combined == server.stateHash)
        }
        #expect(!server.isIn(1))
    }

    @Test func aDealThatIsNotOneDeckIsRefused() {
        let game = SnapGame(seats: 2, seed: 1)
        var deal = game.dealCards(peers: [1, 2])
        deal.hands[1].cards[0] = deal.hands[0].cards[0]
        let ready = game.serverReady(peers: [1, 2], names: ["a", "b"], viewer: 0)
        #expect(throws: SnapError.invalidDeal) { try SnapReplica(ready: ready, deal: deal) }
        let badReady = ServerReady(players: [
            .init(peer: 9, position: 0, name: "x"), .init(peer: 2, position: 1, name: ""),
        ])
        #expect(throws: SnapError.invalidDeal) {
            try SnapReplica(ready: badReady, deal: game.dealCards(peers: [1, 2]))
        }
    }
}
