import NIOCore
import NIOPosix
import SkirmishGames
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishServer

/// Suns tallies compared by the relay, and hostile traffic against a running match, over real loopback sockets.
@Suite(.serialized) struct SunsAndDefenceTests {
    static let layout = (0..<5).map { SunsStart.Sun(x: 0.1 + Float($0) * 0.18, y: 0.5) }

    /// Plays a Suns race in which both players strike every sun at the same game time (so every capture conflicts
    /// and the tie rule decides), then sends its tally, corrupted when asked, the tally delay after the last capture
    /// as an honest client does (`SunsGame.tallyDelay`: a tally sooner after a capture's Ack is unsettled, not judged).
    static func race(_ session: AsyncClientSession, corruptTally: Bool) async throws -> SunsTally {
        var game = SunsGame(seat: 0)
        var seat = 0
        var received = 0
        for await event in session.events {
            switch event {
            case .stateChanged(.seated(let welcome)):
                seat = Int(welcome.seat)
                game = SunsGame(seat: seat)
                let toss: UInt32 = seat == 0 ? 900 : 100
                game.propose(coinToss: toss, suns: Self.layout)
                session.send(.sunsStart(SunsStart(coinToss: toss, suns: Self.layout)))
            case .stateChanged(.closed(let cause)):
                throw PlayError(text: "disconnected: \(cause)")
            case .message(.sunsStart(let other), _):
                guard case .adopted(let suns) = game.receiveStart(other) else { continue }
                for (index, sun) in suns.enumerated() {
                    let strike = SunsStrike(x: sun.x, y: sun.y, radius: 0.05, gameTime: 1 + Float(index) * 0.5)
                    session.send(.sunsStrike(strike))
                    for capture in game.strike(strike, by: seat) {
                        session.send(.sunsCapture(capture))
                    }
                }
            case .message(.sunsCapture(let capture), _):
                game.receiveCapture(capture, by: 1 - seat)
                received += 1
                if received == Self.layout.count {
                    try await Task.sleep(for: .seconds(Double(SunsGame.tallyDelay)) + .milliseconds(100))
                    var tally = game.tally()
                    if corruptTally { tally.entries[0].owner = tally.entries[0].owner == 0 ? 1 : 0 }
                    session.send(.sunsTally(tally))
                    return tally
                }
            default:
                break
            }
        }
        throw PlayError(text: "event stream ended")
    }

    @Test(arguments: [false, true])
    func sunsTalliesAgreeUnlessOneIsCorrupted(corrupt: Bool) async throws {
        let capture = LogCapture()
        let fixture = try await ServerFixture.start(logger: capture.logger("skirmish.server"))
        let a = try await fixture.client(.udp, game: .suns, seats: 2, name: "sun-a")
        let b = try await fixture.client(.udp, game: .suns, seats: 2, name: "sun-b")
        let tallies = try await within(.seconds(20)) {
            async let first = Self.race(a, corruptTally: false)
            async let second = Self.race(b, corruptTally: corrupt)
            return try await [first, second]
        }
        #expect(SunsTallyComparison.agree(tallies[0], tallies[1]) == !corrupt)
        // Every sun was claimed by both at the same time: the tie goes to seat 0.
        if !corrupt { #expect(tallies[0].entries.allSatisfy { $0.owner == 0 }) }
        try await eventually(within: .seconds(10)) { try await fixture.stats().compared(.suns) == 1 }
        #expect(try await fixture.stats().desyncs(.suns) == (corrupt ? 1 : 0))
        await fixture.stop()
        // The server's desync is one warning in its log (written by the once-a-second look, or at the stop).
        let warnings = capture.entries(startingWith: "desync")
        #expect(warnings.map(\.level) == (corrupt ? [.warning] : []), "\(warnings)")
        #expect(warnings.first.map { $0.metadata["count"] == "1" && $0.metadata["game"] == "suns" } ?? !corrupt)
    }

    @Test func aBarrageOfBadPacketsLeavesARunningMatchIntact() async throws {
        let fixture = try await ServerFixture.start { $0.packetRate = 100_000 }
        // The honest pair is seated before the attacker says Hello, so the matchmaker cannot pair the attacker with
        // one of them and leave the other waiting (their handshakes would otherwise race on a loaded machine).
        let a = try await fixture.client(.udp, game: .puck, seats: 2, name: "honest-a")
        let welcomeA = try await within(.seconds(10)) { try await connected(a) }
        let b = try await fixture.client(.udp, game: .puck, seats: 2, name: "honest-b")
        let welcomeB = try await within(.seconds(10)) { try await connected(b) }
        let attacker = try await fixture.client(.udp, game: .puck, seats: 2, name: "rogue")
        // A plain socket that never handshakes: its packets come from an address the server has no session for.
        let spoofer = try await DatagramBootstrap(group: fixture.group).bind(host: "127.0.0.1", port: 0).get()
        let serverAddress = try SocketAddress(
            ipAddress: "127.0.0.1", port: try #require(fixture.server.addresses.udp?.port))
        _ = try await within(.seconds(10)) { try await connected(attacker) }
        let bad: [(Rejection, [UInt8])] = [
            (.badMagic, [0x47, 0x45, 0x54, 0x20] + [UInt8](repeating: 0, count: 10)),
            (.tooShort, [0x53, 0x4E]),
            (.tooLarge, encode(Packet(number: 9, .chat(Chat(text: "x")))) + [UInt8](repeating: 0x41, count: 1_300)),
            (
                .truncatedPayload,
                Array(encode(Packet(number: 9, .paddleState(.init(inputStep: 1, x: 1, y: 1, vx: 0, vy: 0)))).prefix(16))
            ),
            (.wrongDirection, encode(Packet(number: 9, .serverQuit))),
            (.unknownType, [0x53, 0x4E, 0x41, 0x50, 0, 0, 0, 1, 0x7F, 0x7F]),
        ]
        let results = try await within(wholePuckMatch) {
            async let first = playPuck(a, phase: 0, seat: Int(welcomeA.seat))
            async let second = playPuck(b, phase: 7, seat: Int(welcomeB.seat))
            for round in 0..<20 {
                for (_, bytes) in bad { attacker.sendRaw(bytes) }
                // Replayed: reliable number 1 again (already delivered): acked and dropped, never re-run.
                attacker.sendRaw(encode(Packet(number: 1, .chat(Chat(text: "replay \(round)")))))
                // Spoofed: a game packet from an address that never completed a handshake.
                let spoofed = encode(
                    Packet(number: UInt32(round + 1), .paddleState(.init(inputStep: 1, x: 1, y: 1, vx: 0, vy: 0))))
                try await spoofer.writeAndFlush(
                    AddressedEnvelope(remoteAddress: serverAddress, data: ByteBuffer(bytes: spoofed)))
                try await Task.sleep(for: .milliseconds(20))
            }
            return try await [first, second]
        }
        #expect(results.allSatisfy { $0.desyncs == 0 })
        #expect(results.filter { $0.over.winner == Side.me }.count == 1)
        let stats = try await fixture.stats()
        for (reason, _) in bad { #expect(stats.rejections(reason) == 20, "\(reason)") }
        // Every spoofed packet is counted; on a busy machine a player's packets that arrive after the server closed its
        // finished session are unknown too, so the spoofed 20 are a floor.
        #expect(stats.rejections(.unknownPeer) >= 20)
        // The replays (sealed by the attacker's own session, so they reach the endpoint) are counted, not silent.
        #expect(stats.rejections(.duplicate) >= 19)
        try await spoofer.close()
        #expect(stats.matchesCompleted(.puck) == 1)
        await fixture.stop()
    }
}

/// Waits until `condition` holds, checking every 20 ms, failing after `limit`.
func eventually(within limit: Duration, _ condition: @escaping @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw Timeout(limit: limit)
}
