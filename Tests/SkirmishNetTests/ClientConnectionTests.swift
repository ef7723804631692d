import NIOCore
import SkirmishNet
import SkirmishWire
import Testing

/// The client's protocol machine driven by hand: a harness plays the server with hand-made handshake packets and a
/// real ``ReliableEndpoint`` for the numbered stream, and time moves only when a test moves it — no sockets, no sleeps.
@Suite struct ClientConnectionTests {
    typealias Event = SnapEvent

    static let start = NIODeadline.uptimeNanoseconds(10_000_000_000)
    static let key = SessionKey(key0: 0x0706_0504_0302_0100, key1: 0x0F0E_0D0C_0B0A_0908)
    static let welcome = Welcome(
        peer: 7, match: 3, seat: 1, tickRate: 60, resumeToken: 0xABCD_EF01_2345, sessionKey: key)

    /// `bytes` with the trailer `key` gives a server's datagram.
    static func sealed(_ bytes: [UInt8], with key: SessionKey = ClientConnectionTests.key) -> [UInt8] {
        let tag = bytes.withUnsafeBytes { key.mac($0, from: .server) }
        return bytes + withUnsafeBytes(of: tag.bigEndian) { Array($0) }
    }
    static let cookie = Cookie(high: 0x1111, low: 0x2222)

    /// The server's side of one connection, and everything the client produced since the test last looked.
    struct Harness {
        var connection: SnapConnection
        var server: ReliableEndpoint
        var now = ClientConnectionTests.start
        /// Packets the client asked to write.
        var sent: [Packet] = []
        /// Events handed over with `nextEvent(from:)`.
        var events: [Event] = []

        init(
            mode: ReliableEndpoint.Mode = .datagram,
            configure: (inout SnapConnection.Configuration) -> Void = { _ in }
        ) {
            var configuration = SnapConnection.Configuration(game: .puck, seats: 2, name: "tester", mode: mode)
            configure(&configuration)
            connection = SnapConnection(configuration: configuration, transport: configuration.transport)
            var reliability = configuration.reliability
            reliability.mode = mode
            server = ReliableEndpoint(configuration: reliability, now: now)
        }

        /// Runs one entry point and collects its packets, events and round trips.
        mutating func run(_ call: (inout SnapConnection, NIODeadline) -> ClientActions<SnapConnection>) {
            let actions = call(&connection, now)
            sent += connection.packets(in: actions)
            events += connection.events(in: actions)
        }

        mutating func connect() { run { $0.connect(now: $1) } }
        mutating func tick() { run { $0.tick(now: $1) } }
        mutating func receive(_ packet: Packet) { run { $0.receive(packet, now: $1) } }

        mutating func advance(_ amount: TimeAmount) {
            now = now + amount
            tick()
        }

        /// Stamps `message` on the server's endpoint and hands it to the client.
        mutating func serverSends(_ message: Message) throws {
            receive(try server.stamp(message, now: now))
        }

        /// What the client sent since the last look.
        mutating func takeSent() -> [Packet] {
            defer { sent = [] }
            return sent
        }

        mutating func takeEvents() -> [Event] {
            defer { events = [] }
            return events
        }

        /// Feeds what the client sent to the server's endpoint and returns what it delivered (Hellos are dropped).
        mutating func serverReceives() -> [Message] {
            var delivered: [Message] = []
            for packet in takeSent() where packet.message.type != .hello {
                _ = server.receive(packet, now: now) { delivered.append($0) }
            }
            return delivered
        }

        /// The server's Ack for everything it holds, as the client would receive it.
        mutating func serverAcks() {
            var acks: [Packet] = []
            _ = server.poll(now: now) { if case .ack = $0.message { acks.append($0) } }
            for ack in acks { receive(ack) }
        }

        /// The whole UDP handshake (or the stream one when the connection is in stream mode).
        mutating func seat(_ welcome: Welcome = ClientConnectionTests.welcome) throws {
            connect()
            if connection.configuration.transport == .udp {
                receive(Packet(.challenge(Challenge(cookie: ClientConnectionTests.cookie))))
            }
            try serverSends(.welcome(welcome))
            #expect(takeEvents() == [.seated(welcome)])
            _ = serverReceives()
        }
    }

    static func hellos(_ packets: [Packet]) -> [Hello] {
        packets.compactMap { if case .hello(let hello) = $0.message { hello } else { nil } }
    }

    static func chat(_ text: String) -> Message { .chat(Chat(text: text)) }

    static func snapshot(tick: UInt32) -> Message {
        let paddle = TableSnapshot.Paddle(x: 160, y: 400, vx: 0, vy: 0)
        return .tableSnapshot(
            TableSnapshot(
                tick: tick, lastInputStep: 0, me: paddle, them: paddle,
                puck: .init(x: 160, y: 240, vx: 0, vy: 0, angle: 0, spin: 0), myScore: 0, theirScore: 0,
                phase: .playing, stateHash: 0))
    }

    // MARK: Handshake

    @Test func theUDPHandshakeGoesThroughTheCookieRoundAndSeatsOnce() throws {
        var harness = Harness()
        #expect(harness.connection.state == .idle)
        harness.connect()
        #expect(harness.connection.state == .handshaking)
        let first = Self.hellos(harness.takeSent())
        #expect(first.count == 1)
        #expect(first.first?.cookie == .zero)
        #expect(first.first?.resumeToken == 0)
        #expect(first.first?.game == .puck && first.first?.seats == 2 && first.first?.name == "tester")

        harness.receive(Packet(.challenge(Challenge(cookie: Self.cookie))))
        let second = harness.takeSent()
        #expect(second.count == 1)
        #expect(Self.hellos(second).first?.cookie == Self.cookie)
        #expect(harness.connection.resumeToken == 0)

        try harness.serverSends(.welcome(Self.welcome))
        #expect(harness.takeEvents() == [.seated(Self.welcome)])
        #expect(harness.connection.state == .seated(Self.welcome))
        #expect(harness.connection.resumeToken == Self.welcome.resumeToken)
        // The Welcome is reliable: its ack goes at once, not at the next tick.
        #expect(harness.takeSent() == [Packet(.ack(Ack(cumulative: 1, bitfield: 0)))])
        // A Challenge after the seat is a stray: no Hello answers it.
        harness.receive(Packet(.challenge(Challenge(cookie: Self.cookie))))
        #expect(harness.takeSent().isEmpty)
    }

    @Test func theStreamHandshakeHasNoCookieRoundAndNoResends() throws {
        var harness = Harness(mode: .stream)
        harness.connect()
        #expect(Self.hellos(harness.takeSent()).count == 1)
        // Only the handshake timeout is pending: a stream never loses the Hello.
        #expect(harness.connection.nextDeadlineOnLoop == Self.start + .seconds(5))
        harness.advance(.seconds(2))
        #expect(harness.takeSent().isEmpty)
        try harness.serverSends(.welcome(Self.welcome))
        #expect(harness.takeEvents() == [.seated(Self.welcome)])
        // Numbers are 0 and nothing is acknowledged on a stream.
        #expect(harness.takeSent().isEmpty)
        harness.run { $0.send(Self.chat("hi"), now: $1) }
        #expect(harness.takeSent() == [Packet(number: 0, Self.chat("hi"))])
    }

    @Test func helloIsResentEveryIntervalUntilTheHandshakeTimesOut() {
        var harness = Harness { $0.helloInterval = .milliseconds(400) }
        harness.connect()
        _ = harness.takeSent()
        #expect(harness.connection.nextDeadlineOnLoop == Self.start + .milliseconds(400))
        harness.advance(.milliseconds(399))
        #expect(harness.takeSent().isEmpty)
        harness.advance(.milliseconds(1))
        #expect(Self.hellos(harness.takeSent()).count == 1)
        // The cookie from a Challenge rides on the resends.
        harness.receive(Packet(.challenge(Challenge(cookie: Self.cookie))))
        _ = harness.takeSent()
        harness.advance(.milliseconds(400))
        #expect(Self.hellos(harness.takeSent()).map(\.cookie) == [Self.cookie])

        var resends = 0
        while harness.connection.state == .handshaking, harness.now < Self.start + .seconds(6) {
            harness.advance(.milliseconds(100))
            resends += Self.hellos(harness.takeSent()).count
        }
        #expect(harness.now == Self.start + .seconds(5))
        #expect(resends == 10) // 1.2 s … 4.8 s: every 400 ms after the cookie Hello at 0.8 s
        #expect(harness.connection.state == .closed(.handshakeTimeout))
        #expect(harness.takeEvents() == [.closed(.handshakeTimeout)])
        #expect(harness.connection.nextDeadlineOnLoop == .distantFuture)
    }

    @Test func aRejectClosesTheHandshakeAndADisconnectClosesTheSeat() throws {
        var rejected = Harness()
        rejected.connect()
        rejected.receive(Packet(.reject(Reject(reason: .serverFull, text: "full"))))
        #expect(rejected.connection.state == .closed(.rejected(.serverFull)))
        #expect(rejected.takeEvents() == [.closed(.rejected(.serverFull))])
        #expect(rejected.connection.nextDeadlineOnLoop == .distantFuture)

        var dropped = Harness()
        try dropped.seat()
        dropped.receive(Packet(.disconnect(Disconnect(reason: .kicked))))
        #expect(dropped.connection.state == .closed(.remote(.kicked)))
        #expect(dropped.takeEvents() == [.closed(.remote(.kicked))])
        // Nothing more is heard from a closed connection, and nothing can be sent on it.
        try dropped.serverSends(Self.chat("late"))
        #expect(dropped.takeEvents().isEmpty)
        #expect(dropped.connection.stats.packetsIgnored == 1)
        dropped.run { $0.send(Self.chat("too late"), now: $1) }
        #expect(dropped.takeSent().isEmpty)
        #expect(dropped.connection.stats.droppedSends == 1)
    }

    @Test(arguments: [1, 3, 8])
    func aServerThatKeepsChallengingIsGivenUpOn(maxChallenges: Int) {
        var harness = Harness { $0.maxChallenges = maxChallenges }
        harness.connect()
        _ = harness.takeSent()
        var answered: Set<Cookie> = []
        for round in 1...20 {
            harness.receive(Packet(.challenge(Challenge(cookie: Cookie(high: UInt64(round), low: 0)))))
            answered.formUnion(Self.hellos(harness.takeSent()).map(\.cookie))
            // Only the first Challenge is answered at once; later ones ride on the next Hello resend.
            harness.advance(TimeAmount(harness.connection.configuration.helloInterval))
            answered.formUnion(Self.hellos(harness.takeSent()).map(\.cookie))
            if case .closed = harness.connection.state { break }
        }
        #expect(answered.count == maxChallenges, "one Hello per Challenge's cookie, up to the limit")
        #expect(harness.connection.state == .closed(.handshakeLoop))
        #expect(harness.takeEvents() == [.closed(.handshakeLoop)])
    }

    @Test func aResentWelcomeSeatsOnlyOnce() throws {
        var harness = Harness()
        harness.connect()
        harness.receive(Packet(.challenge(Challenge(cookie: Self.cookie))))
        let welcome = try harness.server.stamp(.welcome(Self.welcome), now: harness.now)
        harness.receive(welcome)
        _ = harness.takeSent()
        // Our ack was lost: the server resends the Welcome, and the client acknowledges it again, silently.
        harness.now = harness.now + .milliseconds(200)
        harness.receive(welcome)
        #expect(harness.takeEvents() == [.seated(Self.welcome)])
        #expect(harness.takeSent() == [Packet(.ack(Ack(cumulative: 1, bitfield: 0)))])
        #expect(harness.connection.stats.duplicates == 1)

        // Over a stream nothing is numbered, so a second Welcome is not a duplicate to the endpoint: it refreshes
        // the token but announces nothing.
        var stream = Harness(mode: .stream)
        try stream.seat()
        var rotated = Self.welcome
        rotated.resumeToken = 99
        stream.receive(Packet(.welcome(rotated)))
        #expect(stream.takeEvents().isEmpty)
        #expect(stream.connection.resumeToken == 99)
    }

    // MARK: Resume

    @Test func aSuspendedSeatResumesWithItsTokenAndCatchesUpBothWays() throws {
        var harness = Harness()
        try harness.seat()
        harness.run { $0.send(Self.chat("before"), now: $1) }
        #expect(harness.serverReceives() == [Self.chat("before")])
        harness.serverAcks()

        harness.run { $0.suspend(now: $1) }
        #expect(harness.connection.state == .suspended(Self.welcome))
        #expect(harness.connection.nextDeadlineOnLoop == .distantFuture)
        // While away: a reliable message is numbered but not sent, an unreliable one skipped.
        harness.run { $0.send(Self.chat("while away"), now: $1) }
        harness.run {
            $0.send(Message.paddleState(PaddleState(inputStep: 1, x: 1, y: 1, vx: 0, vy: 0)), now: $1)
        }
        #expect(harness.takeSent().isEmpty)
        #expect(harness.connection.stats.droppedSends == 0)
        // The server sends a goal the client never hears.
        let goal = GoalScored(tick: 9, scorer: .me, myScore: 1, theirScore: 0)
        _ = try harness.server.stamp(.goalScored(goal), now: harness.now)
        // Away for longer than the silence and well into the ack timeout; no timer runs.
        harness.advance(.seconds(8))
        #expect(harness.takeSent().isEmpty && harness.takeEvents().isEmpty)

        harness.run { $0.resume(now: $1) }
        #expect(harness.connection.state == .resuming(Self.welcome))
        let resumeHello = try #require(Self.hellos(harness.takeSent()).first)
        #expect(resumeHello.resumeToken == Self.welcome.resumeToken)
        #expect(resumeHello.cookie == .zero)
        harness.receive(Packet(.challenge(Challenge(cookie: Cookie(high: 5, low: 5)))))
        let cookieHello = try #require(Self.hellos(harness.takeSent()).first)
        #expect(cookieHello.resumeToken == Self.welcome.resumeToken)
        #expect(cookieHello.cookie == Cookie(high: 5, low: 5))

        // The server re-attaches: the goal it never had acknowledged is resent before the Welcome.
        harness.server.reattached(now: harness.now)
        var resent: [Packet] = []
        _ = harness.server.poll(now: harness.now) { resent.append($0) }
        for packet in resent { harness.receive(packet) }
        // A Ping from the old stream goes unanswered: a Pong from the new address would be refused before the Welcome.
        try harness.serverSends(.ping(Ping(player: 0, count: 1, sendTime: 1)))
        #expect(harness.takeEvents() == [.message(.goalScored(goal))])
        #expect(harness.takeSent().isEmpty) // nothing may leave before the Welcome
        var rotated = Self.welcome
        rotated.resumeToken = 0x7777
        try harness.serverSends(.welcome(rotated))
        #expect(harness.takeEvents() == [.resumed(rotated)])
        #expect(harness.connection.state == .seated(rotated))
        #expect(harness.connection.resumeToken == 0x7777)
        // What was sent while away goes out with the Welcome's ack, and arrives once.
        #expect(harness.serverReceives() == [Self.chat("while away")])

        // The clocks restarted: neither the 8 s away nor the old send times out now.
        harness.advance(.milliseconds(1))
        harness.advance(.seconds(4))
        #expect(harness.connection.state == .seated(rotated))
        #expect(harness.takeEvents().isEmpty)
    }

    /// A stream has no resend queue: what was sent while away is held by the connection and follows the Welcome.
    @Test func aStreamResumeSendsWhatWasHeldAfterTheWelcome() throws {
        var harness = Harness(mode: .stream)
        try harness.seat()
        harness.run { $0.suspend(now: $1) }
        harness.run { $0.send(Self.chat("while away"), now: $1) }
        harness.run {
            $0.send(Message.paddleState(PaddleState(inputStep: 1, x: 1, y: 1, vx: 0, vy: 0)), now: $1)
        }
        harness.run { $0.resume(now: $1) }
        let hellos = harness.takeSent()
        #expect(hellos.count == 1)
        #expect(Self.hellos(hellos).first?.resumeToken == Self.welcome.resumeToken)
        try harness.serverSends(.welcome(Self.welcome))
        #expect(harness.takeEvents() == [.resumed(Self.welcome)])
        #expect(harness.takeSent() == [Packet(number: 0, Self.chat("while away"))])
    }

    @Test func aStreamResumeHoldsNoMoreThanTheResendQueueWould() throws {
        var harness = Harness(mode: .stream) { $0.reliability.maxPendingReliable = 2 }
        try harness.seat()
        harness.run { $0.suspend(now: $1) }
        for index in 1...2 { harness.run { $0.send(Self.chat("\(index)"), now: $1) } }
        #expect(harness.connection.state == .suspended(Self.welcome))
        harness.run { $0.send(Self.chat("3"), now: $1) }
        #expect(harness.connection.state == .closed(.unacknowledged))
        #expect(harness.takeEvents() == [.closed(.unacknowledged)])
    }

    @Test func aRefusedResumeClosesAndCannotBeRetried() throws {
        var harness = Harness()
        try harness.seat()
        harness.run { $0.suspend(now: $1) }
        harness.run { $0.resume(now: $1) }
        _ = harness.takeSent()
        harness.receive(Packet(.reject(Reject(reason: .resumeExpired, text: "gone"))))
        #expect(harness.connection.state == .closed(.rejected(.resumeExpired)))
        #expect(harness.takeEvents() == [.closed(.rejected(.resumeExpired))])
        harness.run { $0.resume(now: $1) }
        #expect(harness.connection.state == .closed(.rejected(.resumeExpired)))
        #expect(harness.takeSent().isEmpty)
    }

    @Test func aResumeTimesOutLikeAHandshake() throws {
        var harness = Harness()
        try harness.seat()
        harness.run { $0.suspend(now: $1) }
        harness.now = harness.now + .seconds(2)
        harness.run { $0.resume(now: $1) }
        harness.advance(.milliseconds(4_999))
        #expect(harness.connection.state == .resuming(Self.welcome))
        harness.advance(.milliseconds(1))
        #expect(harness.connection.state == .closed(.handshakeTimeout))
        #expect(harness.takeEvents() == [.closed(.handshakeTimeout)])
    }

    /// Causes the network brings may be resumed from; ones the server or this side chose may not.
    @Test func onlyANetworkCauseCanBeResumedFrom() throws {
        var silent = Harness()
        try silent.seat()
        silent.advance(.seconds(5))
        #expect(silent.connection.state == .closed(.silence))
        _ = silent.takeSent()
        silent.run { $0.resume(now: $1) }
        #expect(silent.connection.state == .resuming(Self.welcome))
        #expect(Self.hellos(silent.takeSent()).first?.resumeToken == Self.welcome.resumeToken)

        var failed = Harness()
        try failed.seat()
        failed.run { $0.transportFailed("reset", now: $1) }
        #expect(failed.takeEvents() == [.closed(.transportError("reset"))])
        failed.run { $0.resume(now: $1) }
        #expect(failed.connection.state == .resuming(Self.welcome))

        var local = Harness()
        try local.seat()
        local.run { $0.close(reason: DisconnectReason.quit, now: $1) }
        #expect(local.takeSent() == [Packet(.disconnect(Disconnect(reason: .quit)))])
        #expect(local.takeEvents().isEmpty) // the caller knows
        local.run { $0.resume(now: $1) }
        #expect(local.connection.state == .closed(.local))
        #expect(local.takeSent().isEmpty)

        // Without a Welcome there is no token to resume with.
        var fresh = Harness()
        fresh.connect()
        fresh.run { $0.transportFailed("refused", now: $1) }
        fresh.run { $0.resume(now: $1) }
        #expect(fresh.connection.state == .closed(.transportError("refused")))
    }

    // MARK: Timeouts

    @Test func aSilentServerTimesOutAfterFiveSeconds() throws {
        var harness = Harness()
        try harness.seat()
        let seatedAt = harness.now
        var keepalives = 0
        while harness.now < seatedAt + .milliseconds(4_900) {
            harness.advance(.milliseconds(100))
            keepalives += harness.takeSent().filter { $0.message.type == .ping }.count
        }
        #expect(keepalives == 4) // one per idle second
        #expect(harness.connection.state == .seated(Self.welcome))
        #expect(harness.connection.nextDeadlineOnLoop == seatedAt + .seconds(5))
        harness.now = seatedAt + .milliseconds(4_999)
        harness.tick()
        #expect(harness.connection.state == .seated(Self.welcome))
        harness.now = seatedAt + .seconds(5)
        harness.tick()
        #expect(harness.connection.state == .closed(.silence))
        #expect(harness.takeEvents() == [.closed(.silence)])
    }

    @Test func aServerThatNeverAcknowledgesTimesOut() throws {
        var harness = Harness { $0.reliability.silenceTimeout = .seconds(60) }
        try harness.seat()
        let sentAt = harness.now
        harness.run { $0.send(Self.chat("anyone?"), now: $1) }
        while harness.now < sentAt + .milliseconds(9_900) {
            harness.advance(.milliseconds(100))
        }
        #expect(harness.connection.state == .seated(Self.welcome))
        #expect(harness.connection.stats.resends >= 3)
        harness.advance(.milliseconds(100))
        #expect(harness.connection.state == .closed(.unacknowledged))
        #expect(harness.takeEvents() == [.closed(.unacknowledged)])
    }

    @Test func aFullResendQueueClosesTheConnection() throws {
        var harness = Harness { $0.reliability.maxPendingReliable = 2 }
        try harness.seat()
        for index in 1...3 { harness.run { $0.send(Self.chat("\(index)"), now: $1) } }
        #expect(harness.takeSent().count == 2)
        #expect(harness.connection.state == .closed(.unacknowledged))
        #expect(harness.takeEvents() == [.closed(.unacknowledged)])
    }

    // MARK: Ping and Pong

    @Test func pingsAreAnsweredAndPongsMeasureTheRoundTrip() throws {
        var harness = Harness()
        try harness.seat()
        let ping = Ping(player: 1, count: 4, sendTime: 123.5)
        try harness.serverSends(.ping(ping))
        let answers = harness.takeSent()
        #expect(answers.count == 1)
        #expect(answers.first?.message == .pong(ping))
        #expect(answers.first.map { $0.number != 0 } == true) // stamped: unreliable packets carry a number

        // A keepalive after a second of idleness, echoed 80 ms later.
        harness.advance(.seconds(1))
        let keepalive = try #require(harness.takeSent().first { $0.message.type == .ping })
        guard case .ping(let sent) = keepalive.message else { return }
        #expect(sent.sendTime == Double(harness.now.uptimeNanoseconds) / 1e9)
        harness.now = harness.now + .milliseconds(80)
        try harness.serverSends(.pong(sent))
        let events = harness.takeEvents()
        #expect(events.count == 1)
        guard case .rtt(let rtt) = events.first else {
            Issue.record("expected an rtt event, got \(events)")
            return
        }
        #expect(abs(rtt.nanoseconds - 80_000_000) < 1_000)

        // Insane samples (from the future, or a minute old) are not round trips.
        let nowSeconds = Double(harness.now.uptimeNanoseconds) / 1e9
        try harness.serverSends(.pong(Ping(player: 0, count: 9, sendTime: nowSeconds + 1)))
        try harness.serverSends(.pong(Ping(player: 0, count: 10, sendTime: nowSeconds - 61)))
        #expect(harness.takeEvents().isEmpty)
    }

    // MARK: Hostile bytes

    @Test func undecodableBytesAreCountedByKindAndDropped() throws {
        var harness = Harness()
        try harness.seat()
        var valid = try Packet(number: 1, Self.chat("ok")).encoded()
        var samples: [(DecodeError, [UInt8])] = []
        samples.append((.tooShort, [0x53, 0x4E]))
        samples.append((.badMagic, [0, 0, 0, 0] + valid.dropFirst(4)))
        samples.append((.unknownType, Array(valid[0..<8]) + [0x77, 0x77]))
        samples.append((.truncatedPayload, Array(valid.dropLast(2))))
        samples.append((.trailingBytes, valid + [0]))
        var badUTF8 = valid
        badUTF8[10] = 0xFF
        samples.append((.badString, badUTF8))
        samples.append((.tooLarge, [UInt8](repeating: 0, count: WireLimits.maxDatagram + 1)))
        var nan = try Packet(number: 5, .ping(Ping(player: 0, count: 0, sendTime: 0))).encoded()
        nan.replaceSubrange(18..<26, with: [0x7F, 0xF8, 0, 0, 0, 0, 0, 0])
        samples.append((.badValue, nan))
        for (kind, unsealed) in samples {
            // Sealed, as the server sends them: the trailer checks out and the decoder meets the bad bytes.
            let bytes = Self.sealed(unsealed)
            harness.run { connection, now in bytes.withUnsafeBytes { connection.receive($0, now: now) } }
            #expect(harness.connection.stats.decodeErrors[kind] == 1, "\(kind)")
        }
        #expect(harness.connection.stats.decodeErrors.total == UInt64(samples.count))
        #expect(harness.takeEvents().isEmpty && harness.takeSent().isEmpty)
        #expect(harness.connection.state == .seated(Self.welcome))
        // A valid packet through the same path is delivered.
        valid = Self.sealed(try harness.server.stamp(Self.chat("ok"), now: harness.now).encoded())
        harness.run { connection, now in valid.withUnsafeBytes { connection.receive($0, now: now) } }
        #expect(harness.takeEvents() == [.message(Self.chat("ok"))])
    }

    @Test func packetsOnlyAServerMaySendAreTakenFromTheServer() throws {
        var harness = Harness()
        try harness.seat()
        try harness.serverSends(.paddleState(PaddleState(inputStep: 1, x: 0, y: 0, vx: 0, vy: 0)))
        harness.receive(Packet(.hello(Hello(game: .puck, seats: 2, name: "echo"))))
        #expect(harness.takeEvents().isEmpty)
        #expect(harness.connection.stats.packetsIgnored == 2)
    }

    // MARK: A bad network

    /// A link between the connection and a server endpoint: each packet is lost, duplicated or delayed (and so
    /// reordered) by a seeded generator; time advances in 5 ms steps. The server part answers Hellos as a real one
    /// does: a Challenge without the cookie, a Welcome once with it.
    struct Simulation {
        var client: SnapConnection
        var server: ReliableEndpoint
        var now = ClientConnectionTests.start
        var random: SeededRandom
        var inFlight: [(due: NIODeadline, toClient: Bool, packet: Packet)] = []
        var actions = ClientActions<SnapConnection>()
        var welcomed = false
        var seatedEvents = 0
        var chatsAtClient: [UInt32] = []
        var ticksAtClient: [UInt32] = []
        var chatsAtServer: [UInt32] = []
        var stepsAtServer: [UInt32] = []
        let loss: Double
        let duplicate: Double
        let latency: ClosedRange<Int64>

        init(seed: UInt64, loss: Double, duplicate: Double, latency: ClosedRange<Int64>) {
            var configuration = SnapConnection.Configuration(game: .puck, seats: 2, name: "sim", mode: .datagram)
            // Timeouts far away: this checks the delivery guarantee, not when a hopeless link is given up.
            configuration.reliability.ackTimeout = .seconds(3_600)
            configuration.reliability.silenceTimeout = .seconds(3_600)
            configuration.handshakeTimeout = .seconds(3_600)
            configuration.maxChallenges = 1_000
            client = SnapConnection(configuration: configuration, transport: configuration.transport)
            var reliability = configuration.reliability
            reliability.mode = .datagram
            server = ReliableEndpoint(configuration: reliability, now: now)
            random = SeededRandom(seed: seed)
            self.loss = loss
            self.duplicate = duplicate
            self.latency = latency
        }

        mutating func carry(_ packet: Packet, toClient: Bool) {
            guard Double.random(in: 0..<1, using: &random) >= loss else { return }
            let copies = Double.random(in: 0..<1, using: &random) < duplicate ? 2 : 1
            for _ in 0..<copies {
                inFlight.append((now + .milliseconds(Int64.random(in: latency, using: &random)), toClient, packet))
            }
        }

        /// Executes the client's actions the way a shell does, reusing one value.
        mutating func execute() {
            for packet in client.packets(in: actions) { carry(packet, toClient: false) }
            while let event = client.nextEvent(from: &actions) {
                switch event {
                case .seated: seatedEvents += 1
                case .message(.chat(let chat)): chatsAtClient.append(UInt32(chat.text)!)
                case .message(.tableSnapshot(let snapshot)): ticksAtClient.append(snapshot.tick)
                default: break
                }
            }
            actions.removeAll()
        }

        mutating func serverReceive(_ packet: Packet) throws {
            if case .hello(let hello) = packet.message {
                if hello.cookie == .zero {
                    carry(Packet(.challenge(Challenge(cookie: ClientConnectionTests.cookie))), toClient: true)
                } else if !welcomed {
                    welcomed = true
                    carry(try server.stamp(.welcome(ClientConnectionTests.welcome), now: now), toClient: true)
                }
                return
            }
            _ = server.receive(packet, now: now) { message in
                switch message {
                case .chat(let chat): chatsAtServer.append(UInt32(chat.text)!)
                case .paddleState(let paddle): stepsAtServer.append(paddle.inputStep)
                default: break
                }
            }
        }

        mutating func step() throws {
            now = now + .milliseconds(5)
            let due = inFlight.filter { $0.due <= now }
            inFlight.removeAll { $0.due <= now }
            for item in due {
                if item.toClient {
                    // Through the bytes path, as a shell feeds it: sealed, but for the Challenge.
                    var bytes = try item.packet.encoded()
                    if item.packet.message.type != .challenge { bytes = ClientConnectionTests.sealed(bytes) }
                    bytes.withUnsafeBytes { client.receive($0, now: Instant(now), into: &actions) }
                    execute()
                } else {
                    try serverReceive(item.packet)
                }
            }
            client.tick(now: Instant(now), into: &actions)
            execute()
            var out: [Packet] = []
            _ = server.poll(now: now) { out.append($0) }
            for packet in out { carry(packet, toClient: true) }
        }
    }

    /// Every combination of loss, duplication and reordering, handshake included: each reliable message arrives once
    /// and in order both ways, and no unreliable one older than the newest delivered.
    @Test(arguments: [0.0, 0.1, 0.3], ReliableEndpointTests.Mangling.allCases)
    func aBadNetworkLosesNoReliableMessageAndDeliversNoStaleOne(
        loss: Double, mangling: ReliableEndpointTests.Mangling
    ) throws {
        for seed in UInt64(1)...3 {
            var simulation = Simulation(
                seed: seed, loss: loss, duplicate: mangling.duplicate, latency: mangling.latency)
            simulation.client.start(now: Instant(simulation.now), into: &simulation.actions)
            simulation.execute()
            var steps = 0
            while simulation.seatedEvents == 0, steps < 4_000 {
                try simulation.step()
                steps += 1
            }
            #expect(simulation.seatedEvents == 1, "seed \(seed)")
            let count: UInt32 = 200
            for number in 1...count {
                simulation.client.send(Self.chat("\(number)"), now: Instant(simulation.now), into: &simulation.actions)
                simulation.client.send(
                    .paddleState(PaddleState(inputStep: number, x: 0, y: 0, vx: 0, vy: 0)),
                    now: Instant(simulation.now),
                    into: &simulation.actions)
                simulation.execute()
                simulation.carry(
                    try simulation.server.stamp(Self.chat("\(number)"), now: simulation.now), toClient: true)
                simulation.carry(
                    try simulation.server.stamp(Self.snapshot(tick: number), now: simulation.now), toClient: true)
                try simulation.step()
            }
            steps = 0
            while simulation.chatsAtClient.count < count || simulation.chatsAtServer.count < count, steps < 20_000 {
                try simulation.step()
                steps += 1
            }
            #expect(simulation.chatsAtClient == Array(1...count), "seed \(seed)")
            #expect(simulation.chatsAtServer == Array(1...count), "seed \(seed)")
            #expect(zip(simulation.ticksAtClient, simulation.ticksAtClient.dropFirst()).allSatisfy { $0 < $1 })
            #expect(zip(simulation.stepsAtServer, simulation.stepsAtServer.dropFirst()).allSatisfy { $0 < $1 })
            #expect(!simulation.ticksAtClient.isEmpty && !simulation.stepsAtServer.isEmpty)
            #expect(simulation.seatedEvents == 1, "seed \(seed)")
            #expect(simulation.client.state == .seated(Self.welcome), "seed \(seed)")
            let stats = simulation.client.stats
            if loss > 0 { #expect(stats.resends > 0 && stats.lost > 0, "seed \(seed)") }
            if mangling.duplicate > 0 { #expect(stats.duplicates > 0, "seed \(seed)") }
            if mangling == .reordering || mangling == .both { #expect(stats.stale > 0, "seed \(seed)") }
        }
    }
}
