import NIOCore
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishServer

/// Per-match bandwidth (`skirmish_server_match_bytes_per_second`) driven through the core with time as a parameter:
/// each sample is exactly the match's bytes since the previous one over the time since then.
@Suite struct MatchBandwidthTests {
    /// The byte counts a test keeps itself, to hold each of the core's samples against.
    struct Window {
        var since: NIODeadline
        var sent = 0
        var received = 0
    }

    /// Two Puck players for six seconds at 60 Hz, each sending a PaddleState every tick and an Ack every second;
    /// the test plays the IO layer (it encodes each packet and reports its size with `wrote(bytes:match:)`).
    @Test func eachSampleIsTheMatchsBytesOverItsWindow() throws {
        var harness = ServerCoreTests.Harness()
        let players = [try ServerCoreTests.address(46_000), try ServerCoreTests.address(46_001)]
        _ = try harness.join(players[0])
        let welcome = try harness.join(players[1])
        for outgoing in harness.drain() {
            harness.core.wrote(bytes: encode(outgoing.packet).count, match: outgoing.match)
        }
        let tick = TimeAmount.nanoseconds(1_000_000_000 / 60)
        var window: Window?
        var samples: [(sent: Double, received: Double, expectedSent: Double, expectedReceived: Double)] = []
        var number: UInt32 = 1
        var snapshotSize = 0
        var inputSize = 0
        for step in 1...(6 * 60) {
            harness.now = harness.now + tick
            number &+= 1
            for player in players {
                let input = Packet(
                    number: number, .paddleState(PaddleState(inputStep: number, x: 160, y: 300, vx: 0, vy: 0)))
                harness.send(input, from: player)
                // On the wire each datagram carries the session trailer too.
                inputSize = encode(input).count + SessionKey.trailerSize
                if window != nil { window!.received += inputSize }
                if step % 60 == 0 {
                    let ack = Packet(.ack(Ack(cumulative: harness.newestReliable[player] ?? 0, bitfield: 0)))
                    harness.send(ack, from: player)
                    if window != nil { window!.received += encode(ack).count + SessionKey.trailerSize }
                }
            }
            let before = (
                sent: harness.core.traffic.rates(.puck, sent: true),
                received: harness.core.traffic.rates(.puck, sent: false)
            )
            let started = harness.core.stats.matchesStarted(.puck)
            harness.core.tick(now: harness.now)
            if window == nil, harness.core.stats.matchesStarted(.puck) > started {
                window = Window(since: harness.now)
            }
            let after = (
                sent: harness.core.traffic.rates(.puck, sent: true),
                received: harness.core.traffic.rates(.puck, sent: false)
            )
            if after.sent.count > before.sent.count {
                let current = try #require(window, "a sample before the match started")
                #expect(after.sent.count == before.sent.count + 1 && after.received.count == before.received.count + 1)
                let seconds = Double((harness.now - current.since).nanoseconds) / 1e9
                #expect(seconds >= 0.5 && seconds <= 1.6, "a window of \(seconds) s")
                samples.append(
                    (
                        after.sent.sum - before.sent.sum, after.received.sum - before.received.sum,
                        Double(current.sent) / seconds, Double(current.received) / seconds
                    ))
                window = Window(since: harness.now)
            }
            for outgoing in harness.drain() {
                let size = encode(outgoing.packet).count
                harness.core.wrote(bytes: size, match: outgoing.match)
                if outgoing.packet.message.type == .tableSnapshot { snapshotSize = size }
                if window != nil, players.contains(outgoing.connection) {
                    #expect(outgoing.match == welcome.match)
                    window!.sent += size
                }
            }
        }
        // One sample a second once the match runs: five or six in six seconds, never more.
        #expect(samples.count >= 5 && samples.count <= 6, "\(samples.count) samples")
        for sample in samples {
            #expect(abs(sample.sent - sample.expectedSent) <= 1e-6 * sample.expectedSent, "\(sample)")
            #expect(abs(sample.received - sample.expectedReceived) <= 1e-6 * sample.expectedReceived, "\(sample)")
            // 30 snapshots a second to each of two seats, 60 inputs a second from each: at least that much each way.
            #expect(sample.sent >= 0.95 * Double(2 * 30 * snapshotSize), "\(sample)")
            #expect(sample.received >= 0.95 * Double(2 * 60 * inputSize), "\(sample)")
        }
        // Only Puck's series moved: the per-game split is kept.
        #expect(harness.core.traffic.rates(.snap, sent: true).count == 0)

        // The match ends (a player quits): its last partial second is not sampled, and nothing is sampled after.
        harness.send(Packet(.disconnect(Disconnect(reason: .quit))), from: players[0])
        let counted = harness.core.traffic.rates(.puck, sent: true).count
        harness.advance(.seconds(3), step: tick)
        #expect(harness.core.traffic.rates(.puck, sent: true).count == counted)
        #expect(harness.core.traffic.count == 0)
    }

    /// A stream's codec tells the core no packet sizes, so a match with a player on TCP or WebSocket is not sampled:
    /// it would read as a match that moves nothing.
    @Test func aMatchPlayedOverStreamsIsNotSampled() throws {
        var harness = ServerCoreTests.Harness()
        let players: [ConnectionID] = [.stream(1), .stream(2)]
        for player in players {
            let hello = Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2)))
            harness.core.receive(hello, from: player, now: harness.now)
        }
        #expect(harness.drain().filter { $0.packet.message.type == .welcome }.count == 2)
        harness.advance(.seconds(3), step: .nanoseconds(1_000_000_000 / 60))
        #expect(harness.core.stats.matchesStarted(.puck) == 1)
        #expect(harness.core.stats.packetsSent[MessageType.tableSnapshot.index] > 100)
        #expect(harness.core.traffic.count == 0)
        #expect(harness.core.traffic.rates(.puck, sent: true).count == 0)
    }
}
