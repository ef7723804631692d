import NIOCore
import SkirmishGames
import SkirmishWire
import Testing

@testable import SkirmishServer

/// Behaviour the protocol articles state as normative and that no byte vector can show: what a server sends around a
/// goal and around a silent peer (`GameRules.md`, "Snapshots and events"; `WireProtocol.md`, "Timeouts and leaving").
@Suite struct ProtocolSpecTests {
    /// Drives a Puck match to a goal: seat 0 steps aside, seat 1 strikes the resting puck straight down into seat 0's
    /// goal. Returns each server tick's outputs.
    static func playToAGoal() -> [(tick: Int, outputs: [MatchOutput])] {
        var runner = PuckRunner(resumeWindowTicks: 900)
        runner.seatFilled(0)
        runner.seatFilled(1)
        var ticks: [(tick: Int, outputs: [MatchOutput])] = []
        _ = runner.receive(.paddleState(PaddleState(inputStep: 1, x: 60, y: 440, vx: 0, vy: 0)), from: 0)
        for tick in 1...200 {
            // Seat 1's own frame: y 280 is the canonical 200, the bottom edge of its half, over the centre spot.
            if tick == 4 {
                _ = runner.receive(.paddleState(PaddleState(inputStep: 1, x: 160, y: 280, vx: 0, vy: 0)), from: 1)
            }
            var out = MatchOutputs()
            runner.tick(into: &out)
            ticks.append((tick, out.messages))
            if out.messages.contains(where: { $0.message.type == .goalScored }) { break }
        }
        return ticks
    }

    @Test func aScoringTickSendsAnExtraSnapshotBeforeGoalScoredAndTheRegularOneAfterIt() throws {
        let ticks = Self.playToAGoal()
        let (tick, outputs) = try #require(ticks.last)
        for seat in 0..<2 {
            let mine = outputs.filter { $0.seat == seat }.map(\.message)
            let goalIndex = try #require(mine.firstIndex { $0.type == .goalScored }, "seat \(seat) hears of the goal")
            guard case .goalScored(let goal) = mine[goalIndex], goalIndex > 0,
                case .tableSnapshot(let extra) = mine[goalIndex - 1]
            else {
                Issue.record("seat \(seat): \(mine.map(\.type.name)), expected a TableSnapshot right before GoalScored")
                continue
            }
            #expect(goal.scorer == (seat == 1 ? .me : .them))
            #expect(extra.tick == goal.tick && extra.phase == .goalPause && extra.puck.angle == 60)
            #expect(extra.puck.x == (seat == 0 ? 160 : 320 - 160) && extra.puck.vx == 0)
            #expect(extra.myScore + extra.theirScore == 1)
            // The regular 30 Hz snapshot comes on even server ticks, so the scoring tick may carry a second, identical one.
            let snapshots = mine.filter { $0.type == .tableSnapshot }
            #expect(snapshots.count == (tick % PuckConstants.snapshotEvery == 0 ? 2 : 1), "server tick \(tick)")
            #expect(snapshots.allSatisfy { $0 == .tableSnapshot(extra) })
        }
        // Before the goal, snapshots only on even server ticks.
        for (tick, outputs) in ticks.dropLast() {
            let snapshots = outputs.filter { $0.message.type == .tableSnapshot }.count
            #expect(snapshots == (tick % PuckConstants.snapshotEvery == 0 ? 2 : 0), "server tick \(tick)")
        }
    }

    @Test func aSilentPeerIsSentNothingWhenTheServerDropsIt() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_000)
        let b = try ServerCoreTests.address(47_001)
        _ = try harness.join(a)
        _ = try harness.join(b)
        // b plays (so its seat is held for a resume when it drops), then falls silent while a stays alive.
        harness.send(Packet(number: 1, .chat(Chat(text: "hi"))), from: b)
        var number: UInt32 = 0
        var droppedAt: Int?
        var toBAfterTheDrop: [String] = []
        for step in 1...80 {
            harness.advance(.milliseconds(100))
            let outputs = harness.drain().filter { $0.connection == b }
            if droppedAt != nil {
                toBAfterTheDrop += outputs.map(\.packet.message.type.name)
            } else if harness.core.stats.detached == 1 {
                droppedAt = step
                // The drop's tick may still carry what the match sent before it, but no Disconnect.
                #expect(!outputs.contains { $0.packet.message.type == .disconnect })
            }
            number += 1
            harness.keepAlive(a, number: number)
        }
        let drop = try #require(droppedAt, "b is dropped for silence")
        #expect((50...52).contains(drop), "after 5 s of silence, at step \(drop)")
        #expect(toBAfterTheDrop.isEmpty, "sent to a dropped peer: \(toBAfterTheDrop)")
        #expect(harness.core.stats.sessions == 2, "its seat is held for a resume")
    }

    /// `WireProtocol.md`, "Timeouts and leaving": Snap's `ClientQuit` is reliable, so the server acknowledges it (sealed)
    /// before it frees the seat; the client stops resending.
    @Test func clientQuitIsAcknowledgedBeforeTheSeatIsFreed() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_010)
        let b = try ServerCoreTests.address(47_011)
        _ = try harness.join(a, game: .snap)
        _ = try harness.join(b, game: .snap)
        _ = harness.drain()
        harness.send(Packet(number: 1, .clientQuit), from: a)
        let toA = harness.drain().filter { $0.connection == a }
        let acks = toA.compactMap { outgoing -> Ack? in
            guard case .ack(let ack) = outgoing.packet.message, outgoing.key != nil else { return nil }
            return ack
        }
        #expect(acks == [Ack(cumulative: 1, bitfield: 0)], "sent to a: \(toA.map(\.packet.message.type.name))")
        #expect(harness.core.stats.sessions == 1, "a's session is gone")
    }
}
