import NIOCore
import SkirmishGames
import SkirmishWire
import Testing

@testable import SkirmishServer

/// Behaviour the protocol articles state as normative and that no byte vector can show: what a server sends around a
/// goal and around a silent peer (`GameRules.md`, "Snapshots and events"; `WireProtocol.md`, "Timeouts and leaving").
@Suite struct ProtocolSpecTests {
    /// Drives a Puck match to a goal: seat 0 steps aside, and after the kick-off seat 1 strikes the resting puck
    /// straight down into seat 0's goal. Returns each server tick's outputs.
    static func playToAGoal() -> [(tick: Int, outputs: [MatchOutput])] {
        var runner = PuckRunner(resumeWindowTicks: 900)
        runner.seatFilled(0)
        runner.seatFilled(1)
        var ticks: [(tick: Int, outputs: [MatchOutput])] = []
        _ = runner.receive(.paddleState(PaddleState(inputStep: 1, x: 60, y: 440, vx: 0, vy: 0)), from: 0)
        let kickOff = PuckConstants.goalPauseTicks
        for tick in 1...(kickOff + 200) {
            // Seat 1's own frame: y 280 is the canonical 200, the bottom edge of its half, over the centre spot.
            // Sent once the kick-off is over: a paddle that rests against the puck when play starts does not hit it.
            if tick == kickOff + 4 {
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
            #expect(
                extra.tick == goal.tick && extra.phase == .goalPause
                    && extra.puck.angle == Float(PuckConstants.goalPauseTicks))
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

    /// `WireProtocol.md`, "Handshake": a Hello from an address that holds a session triggers nothing; the Welcome is
    /// resent only by its own retransmission timer (200 ms at first).
    @Test func aRepeatedHelloTriggersNothingAndTheWelcomeIsResentOnItsTimer() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_020)
        let welcome = try harness.join(a)
        harness.send(Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2))), from: a)
        #expect(harness.drain().isEmpty, "a repeated Hello is answered with nothing")
        func welcomes(_ outgoing: [Outgoing]) -> [UInt32] {
            outgoing.filter { $0.packet.message == .welcome(welcome) }.map(\.packet.number)
        }
        harness.advance(.milliseconds(190), step: .milliseconds(10))
        #expect(welcomes(harness.drain()).isEmpty, "not before the 200 ms retransmission timeout")
        harness.advance(.milliseconds(20), step: .milliseconds(10))
        #expect(welcomes(harness.drain()) == [1], "resent with its number at 200 ms")
    }

    /// `WireProtocol.md`, "Transports and framing": the 1,200-byte limit is the packet's; the 8 trailer bytes are
    /// allowed only on a datagram that carries a trailer.
    @Test func theDatagramLimitIsThePacketsAndTheTrailerComesOnTop() throws {
        var harness = ServerCoreTests.Harness()
        let stranger = try ServerCoreTests.address(47_030)
        func count(_ reason: Rejection) -> UInt64 { harness.core.stats.rejections(reason) }
        // No session at the address, so no trailer: 1,208 bytes are too many, whatever they hold.
        harness.sendUnsealed(
            encode(Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2)))) + [UInt8](repeating: 0, count: 1_134),
            from: stranger)
        #expect(count(.tooLarge) == 1)
        // Size comes first: a 1,300-byte datagram with a bad magic is tooLarge, a 1,200-byte one badMagic.
        harness.sendUnsealed([UInt8](repeating: 0xFF, count: 1_300), from: stranger)
        #expect(count(.tooLarge) == 2 && count(.badMagic) == 0)
        harness.sendUnsealed([UInt8](repeating: 0xFF, count: 1_200), from: stranger)
        #expect(count(.tooLarge) == 2 && count(.badMagic) == 1)
        // A session's sealed datagram: a 1,200-byte packet plus its trailer is within the limit (the packet is then
        // refused for what it holds), a 1,201-byte one is not.
        let player = try ServerCoreTests.address(47_031)
        _ = try harness.join(player)
        let ping = encode(Packet(number: 1, .ping(Ping(player: 0, count: 1, sendTime: 0))))
        harness.sendRaw(ping + [UInt8](repeating: 0, count: 1_200 - ping.count), from: player)
        #expect(count(.tooLarge) == 2 && count(.trailingBytes) == 1)
        harness.sendRaw(ping + [UInt8](repeating: 0, count: 1_201 - ping.count), from: player)
        #expect(count(.tooLarge) == 3)
    }

    /// `GameRules.md`, "Snapshots and events": once a Puck match is over no more snapshots are sent; the session stays
    /// open (Pings answered) and a PaddleState is counted `out_of_state`.
    @Test func snapshotsStopWhenTheMatchIsOverAndTheSessionStaysOpen() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_040)
        let b = try ServerCoreTests.address(47_041)
        _ = try harness.join(a)
        _ = try harness.join(b)
        harness.advance(.milliseconds(200), step: .milliseconds(10))
        #expect(harness.drain().contains { $0.connection == a && $0.packet.message.type == .tableSnapshot })
        // b leaves: a wins by forfeit and hears PuckMatchOver; the match is over.
        harness.send(Packet(.disconnect(Disconnect(reason: .quit))), from: b)
        #expect(harness.drain().contains { $0.connection == a && $0.packet.message.type == .puckMatchOver })
        var toA: [String] = []
        for step in 1...20 {
            harness.advance(.milliseconds(100), step: .milliseconds(10))
            harness.send(
                Packet(number: UInt32(step), .ping(Ping(player: 1, count: UInt32(step), sendTime: 0))), from: a)
            toA += harness.drain().filter { $0.connection == a }.map(\.packet.message.type.name)
            harness.send(Packet(.ack(Ack(cumulative: harness.newestReliable[a] ?? 0, bitfield: 0))), from: a)
        }
        #expect(!toA.contains("TableSnapshot"), "no snapshot after the match is over")
        #expect(toA.filter { $0 == "Pong" }.count == 20, "Pings are still answered")
        #expect(harness.core.stats.sessions == 1, "a's session stays open")
        let before = harness.core.stats.rejections(.outOfState)
        harness.send(
            Packet(number: 100, .paddleState(PaddleState(inputStep: 1, x: 160, y: 400, vx: 0, vy: 0))), from: a)
        #expect(harness.core.stats.rejections(.outOfState) == before + 1)
    }

    /// `WireProtocol.md`, "Transports and framing": over a stream the cookie is ignored, and a client's
    /// `Disconnect(1)` frees the seat without the server closing the connection.
    @Test func overAStreamTheCookieIsIgnoredAndDisconnectDoesNotClose() throws {
        var harness = ServerCoreTests.Harness()
        let stream = ConnectionID.stream(7)
        harness.core.streamOpened(stream, from: nil, now: harness.now)
        let cookie = Cookie(high: 1, low: 2)
        harness.core.receive(
            Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2, cookie: cookie))), from: stream,
            now: harness.now)
        #expect(harness.drain().contains { $0.connection == stream && $0.packet.message.type == .welcome })
        harness.core.receive(Packet(.disconnect(Disconnect(reason: .quit))), from: stream, now: harness.now)
        harness.advance(.milliseconds(500))
        #expect(harness.core.stats.sessions == 0)
        #expect(!harness.drain().contains { $0.connection == stream && $0.closeAfter }, "the server does not close")
    }

    /// `WireProtocol.md`, "Timeouts and leaving" (timer tolerance): the matchmaking timeout is checked by the
    /// once-a-second housekeeping, so its `Reject(9)` comes 30–31 s after the first player, never before 30 s.
    @Test func theMatchmakingRejectComesBetweenThirtyAndThirtyOneSeconds() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_050)
        _ = try harness.join(a)
        var rejectedAfter: Int?
        for step in 1...320 where rejectedAfter == nil {
            harness.advance(.milliseconds(100), step: .milliseconds(100))
            let rejects = harness.drain().filter { $0.connection == a && $0.packet.message.type == .reject }
            if !rejects.isEmpty {
                rejectedAfter = step
                #expect(rejects.first?.key != nil, "sealed")
            }
            harness.keepAlive(a, number: UInt32(step))
        }
        let step = try #require(rejectedAfter, "a forming match times out")
        #expect((300...310).contains(step), "Reject(9) after \(step * 100) ms")
    }

    // MARK: Issue 32, item 4

    /// `WireProtocol.md`, "Acknowledgements" (the ack deadline): the server acknowledges a reliable packet on its next
    /// tick, within 1/60 s, with the bitfield naming what arrived out of order, and acknowledges a duplicate again.
    @Test func theServerAcknowledgesEachReliablePacketWithinOneTickWithItsBitfield() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_060)
        _ = try harness.join(a)
        _ = harness.drain()
        let tick = TimeAmount.nanoseconds(1_000_000_000 / 60 + 1)
        func acksAfterOneTick() -> [Ack] {
            let immediate = harness.drain().filter { $0.connection == a && $0.packet.message.type == .ack }
            #expect(immediate.isEmpty, "acknowledged with the tick, not per packet")
            harness.advance(tick, step: tick)
            return harness.drain().compactMap { outgoing in
                guard outgoing.connection == a, case .ack(let ack) = outgoing.packet.message else { return nil }
                #expect(outgoing.key != nil, "sealed")
                return ack
            }
        }
        let chat = { (number: UInt32) in Packet(number: number, .chat(Chat(text: "n\(number)"))) }
        harness.send(chat(1), from: a)
        #expect(acksAfterOneTick() == [Ack(cumulative: 1, bitfield: 0)])
        harness.send(chat(3), from: a)
        #expect(acksAfterOneTick() == [Ack(cumulative: 1, bitfield: 0b10)], "bit 1: packet 3 arrived, 2 did not")
        harness.send(chat(2), from: a)
        harness.send(chat(4), from: a)
        #expect(acksAfterOneTick() == [Ack(cumulative: 4, bitfield: 0)], "one Ack for the tick's packets")
        harness.send(chat(2), from: a)
        #expect(acksAfterOneTick() == [Ack(cumulative: 4, bitfield: 0)], "a duplicate is acknowledged again")
        #expect(harness.core.stats.rejections(.duplicate) == 1)
    }

    /// `WireProtocol.md`, "Signs of life on TCP and WebSocket" and "Ping and keepalive": over a stream, where every
    /// number is 0, the server Pings an idle client once a second and every packet numbered 0 keeps the session
    /// alive; a client that answers nothing (its Hellos do not count) is dropped after 5 s.
    @Test func overAStreamPacketsNumberedZeroKeepTheSessionAliveAndTheServerPingsOnceASecond() throws {
        var harness = ServerCoreTests.Harness()
        let stream = ConnectionID.stream(11)
        harness.core.streamOpened(stream, from: nil, now: harness.now)
        // Snap for four: a table waiting for three more players has nothing but keepalives to send.
        let hello = Packet(.hello(ServerCoreTests.hello(game: .snap, seats: 4)))
        harness.core.receive(hello, from: stream, now: harness.now)
        let welcome = try #require(harness.drain().first { $0.packet.message.type == .welcome })
        #expect(welcome.packet.number == 0 && welcome.key == nil)
        // 10 s in 100 ms steps: the client answers each Ping with a Pong, both numbered 0, and sends nothing else.
        var pings: [Packet] = []
        for _ in 0..<100 {
            harness.advance(.milliseconds(100))
            for outgoing in harness.drain() where outgoing.connection == stream {
                guard case .ping(let ping) = outgoing.packet.message else { continue }
                pings.append(outgoing.packet)
                harness.core.receive(Packet(number: 0, .pong(ping)), from: stream, now: harness.now)
            }
        }
        #expect((9...10).contains(pings.count), "about one Ping a second: \(pings.count) in 10 s")
        #expect(pings.allSatisfy { $0.number == 0 })
        #expect(harness.core.stats.sessions == 1 && harness.core.stats.sessionsTimedOut == 0)
        // Silent but for a Hello a second: dropped 5 s after its last Pong.
        var droppedAfter: Int?
        for step in 1...70 where droppedAfter == nil {
            harness.advance(.milliseconds(100))
            _ = harness.drain()
            if step % 10 == 0 { harness.core.receive(hello, from: stream, now: harness.now) }
            if harness.core.stats.sessionsTimedOut == 1 { droppedAfter = step }
        }
        let after = try #require(droppedAfter, "the silent stream session is dropped")
        #expect((50...51).contains(after), "after \(after * 100) ms")
    }

    /// `WireProtocol.md`, "The packet budget": every datagram counts, an Ack too; verified and unverified packets have
    /// budgets of their own; a whole budget passes in one burst, and half a second into the next window the one
    /// before still counts for half.
    @Test func thePacketBudgetIsASlidingSecondAndEveryAckCounts() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_070)
        // The join spent one unverified packet (the Hello with a zero cookie) and one verified (the one with a cookie).
        _ = try harness.join(a)
        func count(_ reason: Rejection) -> UInt64 { harness.core.stats.rejections(reason) }
        let ack = encode(Packet(.ack(Ack(cumulative: 0, bitfield: 0))))
        for _ in 0..<450 { harness.sendUnsealed(ack, from: a) }
        #expect(count(.badMAC) == 399 && count(.rateLimited) == 51, "unverified: 400 in the second")
        for _ in 0..<450 { harness.sendRaw(ack, from: a) }
        #expect(count(.rateLimited) == 102, "verified: 400 of their own")
        harness.now = harness.now + .milliseconds(1_500)
        for _ in 0..<300 { harness.sendRaw(ack, from: a) }
        #expect(count(.rateLimited) == 202, "half of the last window's 400 still counts: 200 more pass")
    }

    /// `WireProtocol.md`, "What the trailer protects against": the session key is in the Welcome's bytes, so whoever
    /// reads that datagram can seal packets of the session; the trailer stops only those who cannot.
    @Test func whoeverReadsTheWelcomeCanSealForTheSession() throws {
        var harness = ServerCoreTests.Harness()
        let a = try ServerCoreTests.address(47_080)
        _ = try harness.join(a)
        let b = try ServerCoreTests.address(47_081)
        harness.send(Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2))), from: b)
        guard case .challenge(let challenge)? = harness.drain().first?.packet.message else {
            Issue.record("expected a Challenge")
            return
        }
        harness.send(Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2, cookie: challenge.cookie))), from: b)
        let welcome = try #require(harness.drain().first { $0.connection == b && $0.packet.message.type == .welcome })
        // The datagram as an on-path observer captures it.
        var buffer = [UInt8](repeating: 0, count: WireLimits.maxDatagram + SessionKey.trailerSize)
        let datagram = buffer.withUnsafeMutableBytes { Array($0[0..<welcome.encode(into: $0)]) }
        func word(at offset: Int) -> UInt64 {
            datagram[(PacketHeader.size + offset)..<(PacketHeader.size + offset + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        let observed = SessionKey(key0: word(at: 19), key1: word(at: 27))
        #expect(observed == welcome.key)
        // An off-path forger without it is dropped; the observer's Disconnect, sealed with the key read, ends b's seat.
        let disconnect = encode(Packet(.disconnect(Disconnect(reason: .quit))))
        harness.sendUnsealed(sealed(disconnect, with: SessionKey(key0: 7, key1: 7), from: .client), from: b)
        #expect(harness.core.stats.rejections(.badMAC) == 1 && harness.core.stats.sessions == 2)
        harness.sendUnsealed(sealed(disconnect, with: observed, from: .client), from: b)
        #expect(harness.core.stats.sessions == 1, "the forged Disconnect was taken as b's own")
    }
}
