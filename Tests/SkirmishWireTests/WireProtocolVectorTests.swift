import SkirmishTestSupport
import SkirmishWire
import Testing

/// The byte vectors of `WireProtocol.md`, read from the article: each decodes with the real codec to the fields stated
/// here, encodes back to the same bytes, and every message type the codec knows has one. A vector edited in the article
/// without the code (or the code without the article) fails here.
@Suite struct WireProtocolVectorTests {
    static let article = Result {
        try ArticleVectors(article: "WireProtocol.md", module: "SkirmishWire", testFile: #filePath)
    }

    /// The key of the article's session-trailer vectors.
    static let key = SessionKey(key0: 0x0706_0504_0302_0100, key1: 0x0F0E_0D0C_0B0A_0908)
    static let cookie = Cookie(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10)

    /// What each `packet.*` vector must decode to.
    static let expected: [String: Packet] = [
        "packet.sign-in-request": Packet(number: 2, .signInRequest),
        "packet.sign-in-response": Packet(number: 1, .signInResponse(SignInResponse(name: "crazy joe"))),
        "packet.ack": Packet(.ack(Ack(cumulative: 5, bitfield: 0b1010))),
        "packet.hello": Packet(.hello(Hello(game: .puck, seats: 2, name: "bo"))),
        "packet.hello.own-game": Packet(.hello(Hello(game: GameKind(rawValue: 200), seats: 2, name: "bo"))),
        "packet.hello.longest-name": Packet(
            .hello(Hello(game: .snap, seats: 3, name: String(repeating: "n", count: WireLimits.maxName)))),
        "packet.challenge": Packet(.challenge(Challenge(cookie: cookie))),
        "packet.welcome": Packet(
            number: 1,
            .welcome(Welcome(peer: 7, match: 42, seat: 1, tickRate: 60, resumeToken: 99, sessionKey: key))),
        "packet.reject": Packet(.reject(Reject(reason: .serverFull, text: "full"))),
        "packet.ping": Packet(number: 3, .ping(Ping(player: 7, count: 2, sendTime: 1.5))),
        "packet.pong": Packet(number: 5, .pong(Ping(player: 7, count: 2, sendTime: 1.5))),
        "packet.disconnect": Packet(.disconnect(Disconnect(reason: .quit))),
        "packet.chat": Packet(number: 2, .chat(Chat(text: "gl hf"))),
        "packet.server-quit": Packet(number: 6, .serverQuit),
        "packet.other-client-quit": Packet(number: 5, .otherClientQuit(PeerRef(peer: 9))),
        "packet.server-ready": Packet(
            number: 1,
            .serverReady(
                ServerReady(players: [
                    .init(peer: 7, position: 0, name: "ann"), .init(peer: 9, position: 1, name: "bob"),
                ])
            )),
        "packet.client-ready": Packet(number: 4, .clientReady),
        "packet.deal-cards": Packet(
            number: 2,
            .dealCards(
                DealCards(hands: [
                    .init(peer: 7, cards: [Card(rawValue: 0)!, Card(rawValue: 51)!]),
                    .init(peer: 9, cards: [Card(suit: 0, rank: 12)!]),
                ]))),
        "packet.client-dealt-cards": Packet(number: 5, .clientDealtCards),
        "packet.activate-player": Packet(number: 3, .activatePlayer(PeerRef(peer: 7))),
        "packet.client-turned-card": Packet(number: 6, .clientTurnedCard),
        "packet.player-should-snap": Packet(number: 7, .playerShouldSnap),
        "packet.player-called-snap": Packet(
            number: 4, .playerCalledSnap(PlayerCalledSnap(peer: 7, outcome: .wrong, stateHash: 0xDEAD_BEEF))),
        "packet.client-quit": Packet(number: 8, .clientQuit),
        "packet.card-turned": Packet(
            number: 7, .cardTurned(CardTurned(peer: 7, card: Card(suit: 1, rank: 0)!, stateHash: 0x1234_5678))),
        "packet.snap-game-over": Packet(number: 8, .snapGameOver(SnapGameOver(winner: 9, stateHash: 0xCAFE_BABE))),
        "packet.paddle-state": Packet(
            number: 5, .paddleState(PaddleState(inputStep: 4, x: 160, y: 400, vx: 1, vy: -1))),
        "packet.paddle-state.off-table": Packet(
            number: 6, .paddleState(PaddleState(inputStep: 5, x: -1_000, y: 5_000, vx: 0, vy: 0))),
        "packet.table-snapshot": Packet(
            number: 9,
            .tableSnapshot(
                TableSnapshot(
                    tick: 10, lastInputStep: 4, me: .init(x: 160, y: 400, vx: 0, vy: 0),
                    them: .init(x: 160, y: 80, vx: 0, vy: 0),
                    puck: .init(x: 160, y: 240, vx: 2, vy: -3, angle: 0, spin: 0), myScore: 1, theirScore: 0,
                    phase: .playing, stateHash: 0x0BAD_F00D))),
        "packet.goal-scored": Packet(
            number: 9, .goalScored(GoalScored(tick: 1000, scorer: .them, myScore: 2, theirScore: 3))),
        "packet.puck-match-over": Packet(
            number: 10, .puckMatchOver(PuckMatchOver(winner: .me, myScore: 7, theirScore: 5))),
        "packet.suns-start": Packet(
            number: 1, .sunsStart(SunsStart(coinToss: 42, suns: [.init(x: 0.5, y: 0.25), .init(x: 0.75, y: 1)]))),
        "packet.suns-strike": Packet(number: 2, .sunsStrike(SunsStrike(x: 0.5, y: 0.5, radius: 0.125, gameTime: 1.5))),
        "packet.suns-capture": Packet(number: 3, .sunsCapture(SunsCapture(sunIndex: 3, gameTime: 2.5))),
        "packet.suns-tally": Packet(
            number: 4,
            .sunsTally(SunsTally(entries: [.init(owner: 0, time: 1), .init(owner: SunsTally.Entry.unowned, time: 0)]))),
        "packet.game-reliable": Packet(number: 5, .game(GamePayload(bytes: [1, 0x15, 0]))),
        "packet.game-unreliable": Packet(number: 6, .game(GamePayload(reliable: false, bytes: []))),
    ]

    /// What each sealed `datagram.*` vector must hold (the packet before its trailer) and who sends it.
    static let datagrams: [String: (Packet, Role)] = [
        "datagram.disconnect.client": (Packet(.disconnect(Disconnect(reason: .quit))), .client),
        "datagram.disconnect.server": (Packet(.disconnect(Disconnect(reason: .quit))), .server),
        "datagram.paddle-state.client": (
            Packet(number: 2, .paddleState(PaddleState(inputStep: 1, x: 160, y: 400, vx: 0, vy: 0))), .client
        ),
        "datagram.welcome.server": (expected["packet.welcome"]!, .server),
        "datagram.ack.client": (Packet(.ack(Ack(cumulative: 1, bitfield: 0))), .client),
        "datagram.hello-resume.client": (
            Packet(.hello(Hello(game: .puck, seats: 2, cookie: cookie, resumeToken: 99, name: "bo"))), .client
        ),
    ]

    func vector(_ label: String) throws -> ArticleVectors.Vector {
        let vectors = try Self.article.get()
        return try #require(vectors[label], "WireProtocol.md has no vector `\(label)`")
    }

    @Test(arguments: expected.keys.sorted())
    func aPacketVectorDecodesToItsFieldsAndEncodesToItsBytes(label: String) throws {
        let bytes = try vector(label).bytes
        let packet = try #require(Self.expected[label])
        #expect(try Packet.decode(bytes, maxSize: WireLimits.maxDatagram) == packet, "\(label)")
        #expect(ArticleVectors.hex(try packet.encoded()) == ArticleVectors.hex(bytes), "\(label)")
    }

    @Test func everyPacketVectorOfTheArticleIsCheckedHere() throws {
        let labels = try Self.article.get().all.map(\.label)
        let unchecked = labels.filter {
            $0.hasPrefix("packet.") && Self.expected[$0] == nil
                || $0.hasPrefix("datagram.") && Self.datagrams[$0] == nil
        }
        #expect(unchecked.isEmpty, "vectors without expected fields: \(unchecked)")
        #expect(labels.allSatisfy { ["packet.", "datagram.", "frame.", "error."].contains(where: $0.hasPrefix) })
    }

    /// A new message type needs a vector in the article: the types are read from the article's bytes.
    @Test func everyMessageTypeTheCodecKnowsHasAVectorInTheArticle() throws {
        var covered: Set<MessageType> = []
        for vector in try Self.article.get().all where vector.label.hasPrefix("packet.") {
            covered.insert(try Packet.decode(vector.bytes).message.type)
        }
        let missing = MessageType.allCases.filter { !covered.contains($0) }.map(\.name)
        #expect(missing.isEmpty, "message types without a vector in WireProtocol.md: \(missing)")
    }

    @Test func everyErrorVectorFailsWithTheErrorItNames() throws {
        let errors = try Self.article.get().all.filter { $0.label.hasPrefix("error.") }
        #expect(errors.count >= 7)
        for vector in errors {
            let name = try #require(vector.fields["error"], "\(vector.label) names no error")
            #expect(throws: DecodeError.allCases.first { $0.label == name }!, "\(vector.label)") {
                try Packet.decode(vector.bytes, maxSize: WireLimits.maxDatagram)
            }
        }
    }

    @Test func theTCPFrameVectorIsALengthPrefixAndOnePacket() throws {
        let bytes = try vector("frame.tcp.ping").bytes
        var decoder = FrameDecoder()
        decoder.append(bytes)
        let body = try #require(try decoder.next())
        let packet = try Packet.decode(Array(body))
        #expect(packet == Packet(.ping(Ping(player: 7, count: 2, sendTime: 1.5))))
        #expect(decoder.bufferedByteCount == 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        let length = try buffer.withUnsafeMutableBytes { try FrameDecoder.encode(packet, into: $0) }
        #expect(Array(buffer[0..<length]) == bytes)
    }

    @Test(arguments: datagrams.keys.sorted())
    func aSealedDatagramVectorIsThePacketAndItsTrailer(label: String) throws {
        let datagram = try vector(label)
        let (packet, sender) = try #require(Self.datagrams[label])
        #expect(datagram.fields["from"] == (sender == .client ? "client" : "server"))
        let encoded = try packet.encoded()
        var buffer = encoded + [UInt8](repeating: 0, count: SessionKey.trailerSize)
        let length = buffer.withUnsafeMutableBytes { Self.key.seal($0, length: encoded.count, from: sender) }
        #expect(length == datagram.bytes.count)
        #expect(ArticleVectors.hex(buffer) == ArticleVectors.hex(datagram.bytes), "\(label)")
        let opened = datagram.bytes.withUnsafeBytes { Self.key.open($0, from: sender).map { Array($0) } }
        #expect(opened == encoded)
        let reflected = datagram.bytes.withUnsafeBytes {
            Self.key.open($0, from: sender == .client ? .server : .client)
        }
        #expect(reflected == nil)
    }

    /// The article's rule in bytes: the payload is padded to 64, and a 31- or 32-byte name is never cut.
    @Test(arguments: 0...WireLimits.maxName)
    func helloIsPaddedToSixtyFourPayloadBytesAndNeverShortensAName(nameLength: Int) throws {
        let name = String(repeating: "n", count: nameLength)
        let bytes = try Packet(.hello(Hello(game: .snap, seats: 3, name: name))).encoded()
        #expect(bytes.count == PacketHeader.size + max(WireLimits.helloPayloadSize, 32 + nameLength + 1))
        #expect(try Packet.decode(bytes) == Packet(.hello(Hello(game: .snap, seats: 3, name: name))))
    }

    @Test func noReplyToAnUnverifiedAddressIsLargerThanTheSmallestHello() throws {
        let shortest = try Packet(.hello(Hello(game: .snap, seats: 3, name: ""))).encoded()
        let challenge = try Packet(.challenge(Challenge(cookie: .zero))).encoded()
        let longestReject = try Packet(
            .reject(Reject(reason: .badCookie, text: String(repeating: "r", count: WireLimits.maxRejectText)))
        ).encoded()
        #expect(shortest.count == 74)
        #expect(challenge.count == 26 && longestReject.count == 73)
    }

    /// The article's order of checks ("Errors"): size, tooShort, magic, type, a numbered handshake or control
    /// packet, the payload's fields in order, then trailing bytes. Each input fails two checks; the earlier one wins.
    @Test func decodeChecksRunInTheArticlesOrder() throws {
        func decoding(_ bytes: [UInt8]) -> DecodeError? {
            do {
                _ = try Packet.decode(bytes, maxSize: WireLimits.maxDatagram)
                return nil
            } catch { return error }
        }
        let snap: [UInt8] = [0x53, 0x4E, 0x41, 0x50]
        let junk: [UInt8] = [0xDE, 0xAD, 0xBE, 0xEF]
        // Size, before anything is read: 1,201 bytes with a bad magic.
        #expect(decoding(junk + [UInt8](repeating: 0, count: 1_197)) == .tooLarge)
        #expect(decoding(junk + [UInt8](repeating: 0, count: 1_196)) == .badMagic)
        // tooShort before the magic: 9 bytes, not SNAP.
        #expect(decoding(junk + [0, 0, 0, 0, 0]) == .tooShort)
        // The magic before the type.
        #expect(decoding(junk + [0, 0, 0, 0, 0xFF, 0xFF]) == .badMagic)
        // The type before the number: an unknown type numbered 1.
        #expect(decoding(snap + [0, 0, 0, 1, 0xFF, 0xFF]) == .unknownType)
        // A numbered control packet before its payload: Ack #3 with 2 of its 8 payload bytes.
        #expect(decoding(snap + [0, 0, 0, 3, 0x00, 0x05, 0, 0]) == .badValue)
        // Payload fields in order: PaddleState x NaN, then a truncated y.
        #expect(decoding(snap + [0, 0, 0, 5, 0x00, 0xC8, 0, 0, 0, 4, 0x7F, 0xC0, 0, 0, 0x43]) == .badValue)
        // Fields before trailing bytes: PaddleState with a NaN x and one byte too many.
        let nan: [UInt8] =
            snap + [0, 0, 0, 5, 0x00, 0xC8, 0, 0, 0, 4, 0x7F, 0xC0, 0, 0] + [UInt8](repeating: 0, count: 12)
        #expect(decoding(nan) == .badValue && decoding(nan + [0]) == .badValue)
        // Within a string: its NUL (or limit) before its UTF-8.
        let response: [UInt8] = snap + [0, 0, 0, 1, 0x00, 0x65]
        #expect(decoding(response + [0xFF, 0xFE]) == .truncatedPayload)
        #expect(decoding(response + [0xFF, 0xFE, 0]) == .badString)
        #expect(decoding(response + [UInt8](repeating: 0xFF, count: WireLimits.maxName + 1)) == .tooLarge)
    }

    /// The article's rule for a string with no NUL ("Field encodings"): `tooLarge` once limit + 1 bytes are present
    /// and none is NUL, `truncatedPayload` when fewer are.
    @Test(arguments: 0...(WireLimits.maxName + 3))
    func aNameWithoutANulIsTooLargeFromLimitPlusOneBytes(length: Int) throws {
        let hello = try Packet(.hello(Hello(game: .snap, seats: 3, name: ""))).encoded()
        let fixed = Array(hello[0..<(PacketHeader.size + 32)])
        let bytes = fixed + [UInt8](repeating: 0x6E, count: length)
        let expected: DecodeError = length > WireLimits.maxName ? .tooLarge : .truncatedPayload
        #expect(throws: expected) { try Packet.decode(bytes, maxSize: WireLimits.maxDatagram) }
    }
}
