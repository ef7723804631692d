import SkirmishGames
import SkirmishWire
import Testing

/// Replicas take any message that decodes — however wrong — without crashing, hanging or growing without bound.
@Suite struct HostileMessageTests {
    struct Junk {
        var rng: SeededRandom

        mutating func float() -> Float {
            switch rng.next() % 4 {
            // Any finite bit pattern: clearing the exponent's lowest bit rules out infinities and NaN.
            case 0: return Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()) & 0xFF7F_FFFF)
            case 1: return Float(Int32(truncatingIfNeeded: rng.next() % 2_000)) - 1_000
            case 2: return .greatestFiniteMagnitude * (rng.next() % 2 == 0 ? 1 : -1)
            default: return Float(rng.next() % 1_000) / 1_000
            }
        }

        mutating func paddle() -> TableSnapshot.Paddle {
            TableSnapshot.Paddle(x: float(), y: float(), vx: float(), vy: float())
        }
    }

    @Test func puckReplicasSurviveArbitrarySnapshotsAndEvents() {
        var junk = Junk(rng: SeededRandom(seed: 66))
        var replica = PuckReplica(seat: 1)
        var desyncs = 0
        for i in 0..<3_000 {
            var snapshot = TableSnapshot(
                tick: UInt32(truncatingIfNeeded: junk.rng.next() % 5_000), lastInputStep: 0, me: junk.paddle(),
                them: junk.paddle(),
                puck: TableSnapshot.Puck(
                    x: junk.float(), y: junk.float(), vx: junk.float(), vy: junk.float(), angle: junk.float(),
                    spin: junk.float()),
                myScore: UInt8(truncatingIfNeeded: junk.rng.next()), theirScore: UInt8(junk.rng.next() % 9),
                phase: PuckPhase(rawValue: UInt8(junk.rng.next() % 4))!, stateHash: 0)
            // Half of them carry their true hash, so they are adopted and the prediction runs on them.
            if i % 2 == 0 { snapshot.stateHash = PuckMatch(snapshot: snapshot, seat: 1).stateHash }
            desyncs += replica.apply(snapshot) == .ok ? 0 : 1
            let goal = GoalScored(
                tick: UInt32(junk.rng.next() % 5_000), scorer: junk.rng.next() % 2 == 0 ? .me : .them,
                myScore: UInt8(junk.rng.next() % 9), theirScore: UInt8(junk.rng.next() % 9))
            desyncs += replica.apply(goal) == .ok ? 0 : 1
            if i % 100 == 0 {
                _ = replica.predictPuck(ticks: Int(junk.rng.next() % 1_000))
                _ = replica.predict(
                    ticks: 10, myTarget: PuckTarget(x: junk.float(), y: junk.float()), deadReckonOpponent: true)
            }
        }
        #expect(replica.goals.count <= PuckReplica.maxGoals)
        #expect(desyncs > 0)
    }

    @Test func snapAndSunsReplicasSurviveArbitraryMessages() throws {
        var rng = SeededRandom(seed: 67)
        let game = SnapGame(seats: 4, seed: 1)
        let peers: [UInt32] = [1, 2, 3, 4]
        var replica = try SnapReplica(
            ready: game.serverReady(peers: peers, names: ["a", "b", "c", "d"], viewer: 2),
            deal: game.dealCards(peers: peers))
        var suns = SunsGame(seat: 1)
        var results = 0
        for _ in 0..<5_000 {
            let peer = UInt32(rng.next() % 6)
            let hash = UInt32(truncatingIfNeeded: rng.next())
            switch rng.next() % 5 {
            case 0:
                results +=
                    replica.apply(
                        CardTurned(peer: peer, card: Card(rawValue: UInt8(rng.next() % 52))!, stateHash: hash)) == .ok
                    ? 1 : 0
            case 1:
                results +=
                    replica.apply(
                        PlayerCalledSnap(
                            peer: peer, outcome: SnapOutcome(rawValue: UInt8(rng.next() % 3))!, stateHash: hash)) == .ok
                    ? 1 : 0
            case 2: results += replica.applyActivate(PeerRef(peer: peer)) == .ok ? 1 : 0
            case 3: results += replica.applyQuit(PeerRef(peer: peer)) == .ok ? 1 : 0
            default: results += replica.apply(SnapGameOver(winner: peer, stateHash: hash)) == .ok ? 1 : 0
            }
            let count = Int(rng.next() % 17)
            let layout = (0..<count).map { _ in
                SunsStart.Sun(x: Float(rng.next() % 101) / 100, y: Float(rng.next() % 101) / 100)
            }
            suns.receiveStart(SunsStart(coinToss: UInt32(rng.next() % 3), suns: layout))
            suns.propose(coinToss: UInt32(rng.next() % 3), suns: layout)
            suns.receiveCapture(
                SunsCapture(sunIndex: UInt32(rng.next() % 16), gameTime: Float(rng.next() % 100)),
                by: Int(rng.next() % 3))
            _ = suns.strike(
                SunsStrike(
                    x: 0.5, y: 0.5, radius: Float(rng.next() % 100 + 1) / 100, gameTime: Float(rng.next() % 70)),
                by: Int(rng.next() % 2))
        }
        #expect(replica.game.seats == 4)
        #expect((Array(replica.game.hands.joined()) + Array(replica.game.piles.joined())).count == 52)
        #expect(suns.myProposals.count <= SunsGame.maxTossRounds && suns.theirProposals.count <= SunsGame.maxTossRounds)
        #expect(suns.tally().entries.count == suns.layout?.count ?? 0)
        #expect(results > 0)
    }
}
