import NIOCore
import SkirmishNet
import SkirmishWire
import Testing

/// The client's half of issue 19: what a datagram must prove before the connection acts on it, what it proves in
/// turn, and how fast it answers a server that keeps challenging. Bytes in, bytes out, no socket.
@Suite struct ClientAuthenticationTests {
    static let key = ClientConnectionTests.key
    static let start = ClientConnectionTests.start

    /// A datagram connection fed bytes as its shell feeds them, with the server's side played by hand.
    struct Wire {
        var connection: SnapConnection
        var server: ReliableEndpoint
        var now = ClientAuthenticationTests.start
        var sent: [[UInt8]] = []
        var events: [SnapEvent] = []

        init(configure: (inout SnapConnection.Configuration) -> Void = { _ in }) {
            var configuration = SnapConnection.Configuration(game: .puck, seats: 2, name: "wire", mode: .datagram)
            configure(&configuration)
            connection = SnapConnection(configuration: configuration, transport: configuration.transport)
            server = ReliableEndpoint(now: now)
        }

        mutating func take(_ actions: ClientActions<SnapConnection>) {
            sent += actions.packets
            events += connection.events(in: actions)
        }

        mutating func feed(_ bytes: [UInt8]) {
            take(bytes.withUnsafeBytes { connection.receive($0, now: now) })
        }

        /// Stamps `message` on the server's endpoint; returns its bytes, sealed under `key` unless `nil`.
        mutating func serverBytes(_ message: Message, key: SessionKey? = ClientAuthenticationTests.key) throws
            -> [UInt8]
        {
            let bytes = try server.stamp(message, now: now).encoded()
            return key.map { ClientConnectionTests.sealed(bytes, with: $0) } ?? bytes
        }

        /// Hello, Challenge, Hello, sealed Welcome.
        mutating func seat() throws {
            take(connection.connect(now: now))
            feed(try Packet(.challenge(Challenge(cookie: ClientConnectionTests.cookie))).encoded())
            feed(try serverBytes(.welcome(ClientConnectionTests.welcome)))
            #expect(connection.state == .seated(ClientConnectionTests.welcome))
            sent = []
            events = []
        }

        mutating func takeSent() -> [[UInt8]] {
            defer { sent = [] }
            return sent
        }
    }

    /// Finding: a spoofed Disconnect from the server's address ended the session. Without the session's trailer it
    /// is now dropped unread; with it (the server's own) it still ends the session.
    @Test func aDisconnectWithoutTheSessionTrailerIsDroppedUnread() throws {
        var wire = Wire()
        try wire.seat()
        let disconnect = try Packet(.disconnect(Disconnect(reason: .kicked))).encoded()
        wire.feed(disconnect)
        wire.feed(ClientConnectionTests.sealed(disconnect, with: SessionKey(key0: 9, key1: 9)))
        wire.feed(try Packet(.reject(Reject(reason: .serverFull, text: "no"))).encoded())
        #expect(wire.connection.state == .seated(ClientConnectionTests.welcome))
        #expect(wire.connection.stats.unauthenticated == 3)
        #expect(wire.events.isEmpty)
        wire.feed(ClientConnectionTests.sealed(disconnect))
        #expect(wire.connection.state == .closed(.remote(.kicked)))
    }

    /// Finding: a TableSnapshot numbered 2³¹ − 1 ahead would make every later snapshot stale. It is refused and
    /// counted, and the next honest one is delivered.
    @Test func aFarFutureSnapshotIsRefusedAndTheNextHonestOneDelivered() throws {
        var wire = Wire()
        try wire.seat()
        let snapshot = ClientConnectionTests.snapshot(tick: 1)
        wire.feed(ClientConnectionTests.sealed(try Packet(number: 0x7FFF_FFFF, snapshot).encoded()))
        #expect(wire.connection.stats.farFuture == 1)
        #expect(wire.events.isEmpty)
        wire.feed(ClientConnectionTests.sealed(try Packet(number: 1, snapshot).encoded()))
        #expect(wire.events == [.message(snapshot)])
        #expect(wire.connection.stats.stale == 0)
    }

    @Test func anAckForNumbersNeverSentIsIgnoredAndCounted() throws {
        var wire = Wire()
        try wire.seat()
        wire.take(wire.connection.send(.chat(Chat(text: "one")), now: wire.now))
        wire.feed(ClientConnectionTests.sealed(try Packet(.ack(Ack(cumulative: 40, bitfield: 0))).encoded()))
        wire.feed(ClientConnectionTests.sealed(try Packet(.ack(Ack(cumulative: 0, bitfield: 0b10))).encoded()))
        #expect(wire.connection.stats.unsentAcks == 2)
        // The chat is still unacknowledged: it is resent.
        wire.now = wire.now + .seconds(1)
        wire.take(wire.connection.tick(now: wire.now))
        #expect(wire.connection.stats.resends >= 1)
    }

    /// After the Welcome every datagram the client sends carries the trailer under the session key, a first Hello
    /// none, and a resume's Hello one (proof of the key).
    @Test func theClientSealsWhatItSendsOnceItHasAKey() throws {
        var wire = Wire()
        wire.take(wire.connection.connect(now: wire.now))
        let firstHello = try #require(wire.takeSent().first)
        #expect(firstHello.count == 74, "a first Hello is bare")
        wire.feed(try Packet(.challenge(Challenge(cookie: ClientConnectionTests.cookie))).encoded())
        wire.feed(try wire.serverBytes(.welcome(ClientConnectionTests.welcome)))
        wire.take(wire.connection.send(.chat(Chat(text: "hi")), now: wire.now))
        let sent = wire.takeSent()
        #expect(sent.count >= 2) // the Hello with the cookie, the Ack of the Welcome, the Chat
        for datagram in sent.dropFirst() {
            let body = try #require(datagram.withUnsafeBytes { Self.key.open($0, from: .client).map { Array($0) } })
            #expect(try Packet.decode(body).message.type != .hello)
        }
        wire.take(wire.connection.suspend(now: wire.now))
        wire.take(wire.connection.resume(now: wire.now))
        let resumeHello = try #require(wire.takeSent().first)
        let body = try #require(resumeHello.withUnsafeBytes { Self.key.open($0, from: .client).map { Array($0) } })
        guard case .hello(let hello) = try Packet.decode(body).message else {
            Issue.record("expected a Hello")
            return
        }
        #expect(hello.resumeToken == ClientConnectionTests.welcome.resumeToken)
    }

    /// A Welcome that is not sealed with the key it carries (forged, or mangled) does not seat the client.
    @Test func aWelcomeNotSealedWithItsOwnKeyIsRefused() throws {
        var wire = Wire()
        wire.take(wire.connection.connect(now: wire.now))
        wire.feed(try Packet(.challenge(Challenge(cookie: ClientConnectionTests.cookie))).encoded())
        wire.feed(try wire.serverBytes(.welcome(ClientConnectionTests.welcome), key: nil))
        wire.feed(try wire.serverBytes(.welcome(ClientConnectionTests.welcome), key: SessionKey(key0: 3, key1: 4)))
        #expect(wire.connection.state == .handshaking)
        #expect(wire.connection.stats.unauthenticated == 2)
    }

    /// Finding: a server answering every Hello with a new Challenge made 24 bots send 771,753 Hellos in 12 s. A
    /// connection now answers only the first Challenge of a handshake at once and the rest with its Hello resends,
    /// so over one second of a server answering every Hello instantly it sends at most three Hellos (it sent nine at
    /// once before, then its owner reconnected).
    @Test func aServerThatChallengesEveryHelloGetsAtMostOneHelloPerInterval() throws {
        var wire = Wire()
        wire.take(wire.connection.connect(now: wire.now))
        var hellos = 0
        var round: UInt64 = 0
        let end = wire.now + .seconds(1)
        while wire.now < end {
            for _ in wire.takeSent() {
                hellos += 1
                round += 1
                wire.feed(try Packet(.challenge(Challenge(cookie: Cookie(high: round, low: round)))).encoded())
            }
            wire.now = wire.now + .milliseconds(1)
            wire.take(wire.connection.tick(now: wire.now))
        }
        #expect(hellos >= 2, "the first Challenge is answered")
        #expect(hellos <= 3, "\(hellos) Hellos in one second")
        #expect(wire.connection.state == .handshaking)
    }
}
