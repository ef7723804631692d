import SkirmishGames
import SkirmishWire
import Testing

/// Replicas fed the server's messages through the real codec, as a client receives them.
@Suite struct WireReplicaTests {
    func throughTheWire(_ message: Message) throws -> Message {
        try Packet.decode(try Packet(number: 1, message).encoded()).message
    }

    @Test func puckSnapshotsAndInputsSurviveTheCodecBitForBit() throws {
        var match = PuckMatch()
        match.start()
        var replicas = [PuckReplica(seat: 0), PuckReplica(seat: 1)]
        var inputs = Inputs(seed: 31)
        var results: [ReplicaCheck] = []
        for step in 0..<3_000 where match.phase != .over {
            // Clients send PaddleState in their own frame; the server takes only x and y.
            var targets: [PuckTarget?] = []
            for seat in 0..<2 {
                guard let t = inputs.target(seat: seat, match: match), t.isFinite else {
                    targets.append(nil)
                    continue
                }
                let sent = PaddleState(inputStep: UInt32(step), x: t.x, y: t.y, vx: 1e9, vy: -1e9)
                guard case .paddleState(let received) = try throughTheWire(.paddleState(sent)) else {
                    Issue.record("not a PaddleState")
                    return
                }
                targets.append(PuckTarget(received))
            }
            let events = match.step(targets: targets)
            for seat in 0..<2 {
                if let goal = events.goal,
                    case .goalScored(let g) = try throughTheWire(.goalScored(goal.message(for: seat)))
                {
                    results.append(replicas[seat].apply(g))
                }
                if match.tick % UInt32(PuckConstants.snapshotEvery) == 0 || events.goal != nil {
                    let snapshot = match.snapshot(for: seat, lastInputStep: UInt32(step))
                    guard case .tableSnapshot(let received) = try throughTheWire(.tableSnapshot(snapshot)) else {
                        Issue.record("not a TableSnapshot")
                        return
                    }
                    #expect(bitEqual(received, snapshot))
                    results.append(replicas[seat].apply(received))
                }
            }
        }
        #expect(results.count > 1_000)
        #expect(results.allSatisfy { $0 == .ok })
        #expect(replicas.allSatisfy { $0.adopted > 400 && $0.latest?.phase == match.phase })
    }

    @Test func snapMessagesSurviveTheCodec() throws {
        var server = SnapGame(seats: 3, seed: 5)
        let peers: [UInt32] = [7, 8, 9]
        let deal = try throughTheWire(.dealCards(server.dealCards(peers: peers)))
        guard case .dealCards(let dealt) = deal else {
            Issue.record("not DealCards")
            return
        }
        var clients: [SnapReplica] = []
        for viewer in 0..<3 {
            let ready = server.serverReady(peers: peers, names: ["a", "b", "c"], viewer: viewer)
            guard case .serverReady(let received) = try throughTheWire(.serverReady(ready)) else {
                Issue.record("the codec turned the message into another type")
                return
            }
            clients.append(try SnapReplica(ready: received, deal: dealt))
        }
        var results: [ReplicaCheck] = []
        for _ in 0..<60 where server.winner == nil {
            let turner = server.turn
            let card = try server.turnCard(by: turner)
            let sent = Message.cardTurned(CardTurned(peer: peers[turner], card: card, stateHash: server.stateHash))
            guard case .cardTurned(let turned) = try throughTheWire(sent) else {
                Issue.record("the codec turned the message into another type")
                return
            }
            results += clients.indices.map { clients[$0].apply(turned) }
        }
        #expect(results.count == 180)
        #expect(results.allSatisfy { $0 == .ok })
    }

    @Test func sunsTalliesFromTheWireAgree() throws {
        var peers = [SunsGame(seat: 0), SunsGame(seat: 1)]
        let layouts = [[SunsStart.Sun(x: 0.25, y: 0.5)], [SunsStart.Sun(x: 0.75, y: 0.5)]]
        for seat in 0..<2 {
            peers[seat].propose(coinToss: UInt32(seat), suns: layouts[seat])
            let start = SunsStart(coinToss: UInt32(1 - seat), suns: layouts[1 - seat])
            guard case .sunsStart(let received) = try throughTheWire(.sunsStart(start)) else {
                Issue.record("the codec turned the message into another type")
                return
            }
            peers[seat].receiveStart(received)
        }
        #expect(peers[0].layout == layouts[1] && peers[1].layout == layouts[1])
        let captures = peers[0].strike(SunsStrike(x: 0.7, y: 0.5, radius: 0.3, gameTime: 1.5), by: 0)
        let rival = peers[1].strike(SunsStrike(x: 0.75, y: 0.45, radius: 0.2, gameTime: 1.5), by: 1)
        for capture in captures {
            guard case .sunsCapture(let c) = try throughTheWire(.sunsCapture(capture)) else {
                Issue.record("the codec turned the message into another type")
                return
            }
            peers[1].receiveCapture(c, by: 0)
        }
        for capture in rival {
            guard case .sunsCapture(let c) = try throughTheWire(.sunsCapture(capture)) else {
                Issue.record("the codec turned the message into another type")
                return
            }
            peers[0].receiveCapture(c, by: 1)
        }
        var tallies: [SunsTally] = []
        for seat in 0..<2 {
            guard case .sunsTally(let t) = try throughTheWire(.sunsTally(peers[seat].tally())) else {
                Issue.record("the codec turned the message into another type")
                return
            }
            tallies.append(t)
        }
        #expect(SunsTallyComparison.agree(tallies[0], tallies[1]))
        // 0.05 / 0.3 × 0.25 ≈ 0.0417 beats 0.05 / 0.2 × 0.25 = 0.0625: seat 0 wins the sun.
        #expect(tallies[0].entries.map(\.owner) == [0])
    }
}
