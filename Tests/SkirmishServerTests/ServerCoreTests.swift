import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishServer

/// The server core driven directly: bytes and a clock in, packets out — handshake rules, timeouts and resume.
@Suite struct ServerCoreTests {
    struct Harness {
        var core = ServerCore(configuration: ServerConfiguration())
        var now = NIODeadline.uptimeNanoseconds(10_000_000_000)
        /// Each player's session key, from its Welcome: what it seals its datagrams with, as a real client does.
        var keys: [ConnectionID: SessionKey] = [:]
        /// The newest reliable number the server sent each player, seen in ``drain()``.
        var newestReliable: [ConnectionID: UInt32] = [:]

        /// Sends `packet` from `connection` as its client would: sealed with its session key once it has one
        /// (every packet but a Hello).
        mutating func send(_ packet: Packet, from connection: ConnectionID) {
            let bytes = encode(packet)
            if packet.message.type == .hello { return sendUnsealed(bytes, from: connection) }
            sendRaw(bytes, from: connection)
        }

        /// Sends bytes with the session trailer of `connection`, when it has a session key.
        mutating func sendRaw(_ bytes: [UInt8], from connection: ConnectionID) {
            sendUnsealed(keys[connection].map { sealed(bytes, with: $0, from: .client) } ?? bytes, from: connection)
        }

        /// Sends bytes exactly as given: what a spoofer without the key can do.
        mutating func sendUnsealed(_ bytes: [UInt8], from connection: ConnectionID) {
            bytes.withUnsafeBytes { core.receive($0, from: connection, now: now) }
        }

        /// What a live client does: answers with an unreliable packet and acknowledges everything so far.
        mutating func keepAlive(_ connection: ConnectionID, number: UInt32) {
            send(Packet(number: number, .pong(Ping(player: 0, count: 0, sendTime: 0))), from: connection)
            _ = drain()
            send(Packet(.ack(Ack(cumulative: newestReliable[connection] ?? 0, bitfield: 0))), from: connection)
            _ = drain()
        }

        /// Advances the clock in `step`s until `elapsed` reaches `end`: `live` players answer and acknowledge
        /// everything each step, `answering` ones only answer (a Pong, acknowledging nothing).
        mutating func play(
            until end: TimeAmount, elapsed: inout TimeAmount, step: TimeAmount = .milliseconds(200),
            live: [ConnectionID], answering: [ConnectionID] = []
        ) {
            while elapsed < end {
                advance(step)
                elapsed = elapsed + step
                // Numbered in tenths of a second: as a client's own counter, it starts small and moves by a few,
                // well within the server's window for unreliable numbers (a jump past it is refused as far-future).
                let number = UInt32(elapsed.nanoseconds / 100_000_000)
                for connection in live { keepAlive(connection, number: number) }
                for connection in answering {
                    send(Packet(number: number, .pong(Ping(player: 0, count: 0, sendTime: 0))), from: connection)
                }
            }
        }

        mutating func drain() -> [Outgoing] {
            defer { core.outbox.removeAll() }
            for outgoing in core.outbox {
                if case .welcome(let welcome) = outgoing.packet.message, welcome.sessionKey != .zero {
                    keys[outgoing.connection] = welcome.sessionKey
                }
                if outgoing.packet.message.type.delivery == .reliable {
                    let number = outgoing.packet.number
                    let newest = newestReliable[outgoing.connection] ?? 0
                    if SerialNumber.follows(number, newest) { newestReliable[outgoing.connection] = number }
                }
            }
            return core.outbox
        }

        mutating func advance(_ amount: TimeAmount, step: TimeAmount = .milliseconds(100)) {
            let end = now + amount
            while now < end {
                now = now + step
                core.tick(now: now)
            }
        }

        /// Runs the UDP handshake for a player at `address` and returns its Welcome; a resume (`token`) seals its
        /// Hellos with `proof`, as a real client proves the session key it holds.
        mutating func join(
            _ address: ConnectionID, game: GameKind = .puck, seats: UInt8 = 2, token: UInt64 = 0,
            proof: SessionKey? = nil
        ) throws -> Welcome {
            send(Packet(.hello(hello(game: game, seats: seats, token: token))), from: address)
            let challenge = try #require(drain().first)
            guard case .challenge(let cookie) = challenge.packet.message else {
                Issue.record("expected a challenge, got \(challenge.packet.message)")
                throw PlayError(text: "no challenge")
            }
            let second = encode(Packet(.hello(hello(game: game, seats: seats, cookie: cookie.cookie, token: token))))
            sendUnsealed(proof.map { sealed(second, with: $0, from: .client) } ?? second, from: address)
            for outgoing in drain() where outgoing.connection == address {
                if case .welcome(let welcome) = outgoing.packet.message { return welcome }
            }
            throw PlayError(text: "no welcome")
        }
    }

    static func hello(game: GameKind, seats: UInt8, cookie: Cookie = .zero, token: UInt64 = 0) -> Hello {
        Hello(
            version: Hello.currentVersion, game: game, seats: seats, match: 0, cookie: cookie, resumeToken: token,
            name: "tester")
    }

    static func address(_ port: Int) throws -> ConnectionID {
        .datagram(try #require(DatagramAddress(try SocketAddress(ipAddress: "127.0.0.1", port: port))))
    }

    @Test func aHelloWithoutAValidCookieNeverAllocatesASession() throws {
        var harness = Harness()
        for port in 20_000..<21_000 {
            harness.send(Packet(.hello(Self.hello(game: .puck, seats: 2))), from: try Self.address(port))
        }
        let replies = harness.drain()
        #expect(replies.count == 1_000)
        #expect(replies.allSatisfy { $0.packet.message.type == .challenge })
        // No amplification: every reply is smaller than the request that caused it.
        let requestSize = encode(Packet(.hello(Self.hello(game: .puck, seats: 2)))).count
        #expect(replies.allSatisfy { encode($0.packet).count < requestSize })
        #expect(harness.core.stats.sessions == 0)

        // A cookie minted for one address is worthless from another.
        var other = Harness()
        other.send(Packet(.hello(Self.hello(game: .puck, seats: 2))), from: try Self.address(30_000))
        guard case .challenge(let challenge) = try #require(other.drain().first).packet.message else {
            Issue.record("expected a challenge")
            return
        }
        other.send(
            Packet(.hello(Self.hello(game: .puck, seats: 2, cookie: challenge.cookie))), from: try Self.address(30_001))
        #expect(other.core.stats.rejections(.badCookie) == 1)
        #expect(other.core.stats.sessions == 0)
        #expect(other.drain().allSatisfy { $0.packet.message.type == .challenge })
    }

    @Test func aValidCookieGetsAWelcomeAndASeat() throws {
        var harness = Harness()
        let first = try harness.join(try Self.address(40_000))
        let second = try harness.join(try Self.address(40_001))
        #expect(first.match == second.match)
        #expect(Set([first.seat, second.seat]) == [0, 1])
        #expect(first.resumeToken != 0 && first.resumeToken != second.resumeToken)
        #expect(harness.core.stats.sessions == 2)
    }

    @Test func badPacketsAreCountedByReasonAndChangeNothing() throws {
        var harness = Harness()
        let player = try Self.address(41_000)
        _ = try harness.join(player)
        let stranger = try Self.address(41_001)
        harness.sendRaw([0x00, 0x01], from: player)
        harness.sendRaw([0x47, 0x45, 0x54, 0x20, 0, 0, 0, 0, 0, 0], from: player)
        harness.sendRaw(encode(Packet(.chat(Chat(text: "x")))).dropLast() + [], from: player)
        harness.sendRaw([UInt8](repeating: 0x53, count: 1_500), from: player)
        harness.send(Packet(number: 5, .serverQuit), from: player)
        harness.send(
            Packet(number: 3, .paddleState(PaddleState(inputStep: 1, x: 1, y: 1, vx: 0, vy: 0))), from: stranger)
        harness.send(Packet(number: 1, .clientTurnedCard), from: player)
        let stats = harness.core.stats
        #expect(stats.rejections(.tooShort) == 1)
        #expect(stats.rejections(.badMagic) == 1)
        #expect(stats.rejections(.truncatedPayload) == 1)
        #expect(stats.rejections(.tooLarge) == 1)
        #expect(stats.rejections(.wrongDirection) == 1)
        #expect(stats.rejections(.unknownPeer) == 1)
        #expect(stats.rejections(.outOfState) == 1)
        #expect(stats.sessions == 1)
    }

    @Test func aFloodFromOneAddressIsRateLimited() throws {
        var harness = Harness()
        let player = try Self.address(42_000)
        _ = try harness.join(player)
        for count in 0..<2_000 {
            harness.send(Packet(number: UInt32(count + 1), .ping(Ping(player: 0, count: 0, sendTime: 0))), from: player)
        }
        #expect(harness.core.stats.rejections(.rateLimited) > 1_000)
        #expect(harness.core.stats.sessions == 1)
    }

    @Test func aSilentClientIsDroppedAfterFiveSecondsAndItsSeatFreedAfterTheResumeWindow() throws {
        var harness = Harness()
        let a = try Self.address(43_000)
        let b = try Self.address(43_001)
        _ = try harness.join(a)
        let welcomeB = try harness.join(b)
        // b plays (a chat; acknowledging its Welcome is not playing), so its seat is held for a resume when it drops.
        harness.send(Packet(number: 1, .chat(Chat(text: "hi"))), from: b)
        // Keep a alive by answering; b goes silent.
        var elapsed = TimeAmount.zero
        harness.play(until: .milliseconds(5_200), elapsed: &elapsed, live: [a])
        #expect(harness.core.stats.detached == 1)
        #expect(harness.core.stats.sessions == 2)
        // Within the window, the token brings b back to its seat from a new address.
        let back = try Self.address(43_002)
        let resumed = try harness.join(back, token: welcomeB.resumeToken)
        #expect(resumed.seat == welcomeB.seat && resumed.match == welcomeB.match && resumed.peer == welcomeB.peer)
        #expect(harness.core.stats.detached == 0)
        #expect(harness.core.stats.resumes == 1)
        // The gap counts against neither timeout: the next tick does not drop b again for its old silence, and it stays
        // seated past ten seconds from its first unacknowledged message while it answers without acknowledging yet.
        harness.advance(.milliseconds(100))
        #expect(harness.core.stats.detached == 0)
        harness.play(until: .seconds(12), elapsed: &elapsed, live: [a], answering: [back])
        #expect(harness.core.stats.detached == 0)
        #expect(harness.core.stats.sessions == 2)
    }

    /// A player whose match ended while it was away resumes to learn the outcome, instead of being refused: the
    /// PuckMatchOver it missed is still unacknowledged in its stream and goes to its new address.
    @Test func aPlayerBackAfterItsMatchEndedResumesAndHearsTheOutcome() throws {
        var harness = Harness()
        let a = try Self.address(45_000)
        let b = try Self.address(45_001)
        _ = try harness.join(a)
        let welcomeB = try harness.join(b)
        harness.advance(.milliseconds(500))
        _ = harness.drain()
        // b is away (it sends nothing); a quits, so b wins by forfeit while away.
        harness.send(Packet(.disconnect(Disconnect(reason: .quit))), from: a)
        harness.advance(.milliseconds(100))
        _ = harness.drain()
        #expect(harness.core.stats.forfeits == 1)

        // b's old address still counts as live (it is not yet silent for 5 s): its resume proves the session key.
        let back = try Self.address(45_002)
        let resumed = try harness.join(back, token: welcomeB.resumeToken, proof: harness.keys[b])
        #expect(resumed.peer == welcomeB.peer && resumed.seat == welcomeB.seat)
        #expect(harness.core.stats.rejections(.resumeExpired) == 0)
        harness.advance(.milliseconds(100))
        let resent = harness.drain().filter { $0.connection == back }
        let outcome = resent.compactMap { out -> PuckMatchOver? in
            if case .puckMatchOver(let over) = out.packet.message { over } else { nil }
        }
        #expect(outcome.count == 1, "\(resent.map(\.packet.message.type))")
        #expect(outcome.first?.winner == .me, "b won the forfeit")
    }

    /// An input in flight when its match ended (the other player left, a goal decided it) is late, as a reordered
    /// one is: counted as stale, never as an honest client out of state (issue 31, item 3).
    @Test func anInputThatArrivesAfterItsMatchEndedIsStaleNotOutOfState() throws {
        var harness = Harness()
        let a = try Self.address(45_100)
        let b = try Self.address(45_101)
        _ = try harness.join(a)
        _ = try harness.join(b)
        harness.advance(.milliseconds(500))
        _ = harness.drain()
        harness.send(Packet(.disconnect(Disconnect(reason: .quit))), from: a)
        harness.advance(.milliseconds(100))
        _ = harness.drain()
        #expect(harness.core.stats.forfeits == 1)
        harness.send(
            Packet(number: 900, .paddleState(PaddleState(inputStep: 90, x: 160, y: 400, vx: 0, vy: 0))), from: b)
        #expect(harness.core.stats.rejections(.outOfState) == 0)
        #expect(harness.core.stats.rejections(.stale) == 1)
        // Past a round trip's grace, an input of a client that has not acknowledged the end is still in flight (its
        // loop may be starved); once it has, the client is out of state.
        harness.advance(ServerCore.lateInputGrace + .milliseconds(100))
        _ = harness.drain()
        harness.send(
            Packet(number: 901, .paddleState(PaddleState(inputStep: 91, x: 160, y: 400, vx: 0, vy: 0))), from: b)
        #expect(harness.core.stats.rejections(.stale) == 2)
        harness.send(Packet(.ack(Ack(cumulative: harness.newestReliable[b] ?? 0, bitfield: 0))), from: b)
        harness.send(
            Packet(number: 902, .paddleState(PaddleState(inputStep: 92, x: 160, y: 400, vx: 0, vy: 0))), from: b)
        #expect(harness.core.stats.rejections(.outOfState) == 1)
        #expect(harness.core.stats.rejections(.stale) == 2)
    }

    /// GameRules.md, Suns: tallies that disagree while a capture the server relayed to one of the players is still
    /// unacknowledged, or was acknowledged less than the tally delay (2 s) before the tally came, were compared before
    /// they could agree (late delivery: unsettled, not a desync): the tally may have left before the capture arrived
    /// and been resent while the capture's Ack overtook it. Later than that, a disagreement is a desync.
    @Test(arguments: [(false, 0), (true, 0), (true, 1_900), (true, 2_100)])
    func aTallySentBeforeItsCapturesArrivedIsUnsettledNotADesync(acknowledged: Bool, thenMilliseconds: Int64) throws {
        var harness = Harness()
        let (a, b) = try Self.startSunsRace(&harness, port: 47_300)
        // b captures the only sun; the server relays its strike and capture to a.
        harness.send(Packet(number: 2, .sunsStrike(SunsStrike(x: 0.5, y: 0.5, radius: 0.05, gameTime: 1))), from: b)
        harness.send(Packet(number: 3, .sunsCapture(SunsCapture(sunIndex: 0, gameTime: 1))), from: b)
        #expect(harness.drain().contains { $0.connection == a && $0.packet.message.type == .sunsCapture })
        if acknowledged {
            harness.send(Packet(.ack(Ack(cumulative: harness.newestReliable[a] ?? 0, bitfield: 0))), from: a)
        }
        harness.now = harness.now + .milliseconds(thenMilliseconds)
        let settled = acknowledged && thenMilliseconds >= 2_000
        // a's tally lacks b's capture (it never arrived, or a tallied too early); b's has it.
        let unowned = SunsTally.Entry(owner: SunsTally.Entry.unowned, time: 0)
        harness.send(Packet(number: 2, .sunsTally(SunsTally(entries: [unowned]))), from: a)
        harness.send(Packet(number: 4, .sunsTally(SunsTally(entries: [.init(owner: 1, time: 1)]))), from: b)
        _ = harness.drain()
        #expect(harness.core.stats.compared(.suns) == 1)
        #expect(harness.core.stats.desyncs(.suns) == (settled ? 1 : 0))
        #expect(harness.core.stats.unsettled(.suns) == (settled ? 0 : 1))
    }

    /// The other way round: b's capture is still being resent to the server when a tallies, so a's tally cannot hold
    /// it, whatever a acknowledged. The late capture makes the comparison unsettled, not a desync.
    @Test func aCaptureThatReachedTheServerAfterATallyIsUnsettledNotADesync() throws {
        var harness = Harness()
        let (a, b) = try Self.startSunsRace(&harness, port: 47_310)
        // a has heard of no capture and tallies; only then do b's strike and capture get through.
        let unowned = SunsTally.Entry(owner: SunsTally.Entry.unowned, time: 0)
        harness.send(Packet(number: 2, .sunsTally(SunsTally(entries: [unowned]))), from: a)
        harness.send(Packet(number: 2, .sunsStrike(SunsStrike(x: 0.5, y: 0.5, radius: 0.05, gameTime: 1))), from: b)
        harness.send(Packet(number: 3, .sunsCapture(SunsCapture(sunIndex: 0, gameTime: 1))), from: b)
        harness.send(Packet(number: 4, .sunsTally(SunsTally(entries: [.init(owner: 1, time: 1)]))), from: b)
        _ = harness.drain()
        #expect(harness.core.stats.compared(.suns) == 1)
        #expect(harness.core.stats.desyncs(.suns) == 0)
        #expect(harness.core.stats.unsettled(.suns) == 1)
    }

    /// Two players from ports `port` and `port + 1` seated at a Suns race over one sun, both started.
    static func startSunsRace(_ harness: inout Harness, port: Int) throws -> (ConnectionID, ConnectionID) {
        let a = try Self.address(port)
        let b = try Self.address(port + 1)
        _ = try harness.join(a, game: .suns)
        _ = try harness.join(b, game: .suns)
        let layout = [SunsStart.Sun(x: 0.5, y: 0.5)]
        harness.send(Packet(number: 1, .sunsStart(SunsStart(coinToss: 1, suns: layout))), from: a)
        harness.send(Packet(number: 1, .sunsStart(SunsStart(coinToss: 1, suns: layout))), from: b)
        _ = harness.drain()
        return (a, b)
    }

    @Test func aSeatIsReleasedWhenTheResumeWindowPasses() throws {
        var harness = Harness()
        let a = try Self.address(44_000)
        let b = try Self.address(44_001)
        _ = try harness.join(a)
        let welcomeB = try harness.join(b)
        harness.core.streamClosed(.stream(99), now: harness.now) // unknown stream: nothing happens
        var elapsed = TimeAmount.zero
        harness.play(until: .seconds(21), elapsed: &elapsed, step: .milliseconds(500), live: [a])
        #expect(harness.core.stats.detached == 0)
        #expect(harness.core.stats.forfeits == 1)
        harness.send(Packet(.hello(Self.hello(game: .puck, seats: 2, token: welcomeB.resumeToken))), from: b)
        let challenge = try #require(harness.drain().first)
        guard case .challenge(let cookie) = challenge.packet.message else {
            Issue.record("expected a challenge")
            return
        }
        harness.send(
            Packet(.hello(Self.hello(game: .puck, seats: 2, cookie: cookie.cookie, token: welcomeB.resumeToken))),
            from: b)
        let reply = try #require(harness.drain().first)
        guard case .reject(let reject) = reply.packet.message else {
            Issue.record("expected a reject, got \(reply.packet.message)")
            return
        }
        #expect(reject.reason == .resumeExpired)
    }

    @Test func shutdownSendsServerQuitToEveryPlayer() throws {
        var harness = Harness()
        let players = try (0..<4).map { try Self.address(45_000 + $0) }
        for player in players { _ = try harness.join(player, game: .snap, seats: 2) }
        harness.core.shutdown(now: harness.now)
        let out = harness.drain()
        for player in players {
            #expect(out.contains { $0.connection == player && $0.packet.message == .serverQuit })
        }
    }
}

/// `bytes` with the session trailer of `key` appended, as `sender` seals a datagram.
func sealed(_ bytes: [UInt8], with key: SessionKey, from sender: Role) -> [UInt8] {
    let tag = bytes.withUnsafeBytes { key.mac($0, from: sender) }
    return bytes + withUnsafeBytes(of: tag.bigEndian) { Array($0) }
}

func encode(_ packet: Packet) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: WireLimits.maxFrame) { buffer, count in
        count = (try? packet.encode(into: UnsafeMutableRawBufferPointer(buffer))) ?? 0
    }
}
