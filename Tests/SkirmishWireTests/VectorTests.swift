import SkirmishWire
import Testing

/// Hand-checked byte vectors: one per message kind, every field written out as it appears on the wire.
@Suite struct VectorTests {
    @Test func signInRequestMatchesTheDesignVector() throws {
        let bytes = try Packet(.signInRequest).encoded()
        #expect(bytes == hex("534e4150 00000000 0064"))
        #expect(try Packet.decode(bytes) == Packet(.signInRequest))
    }

    @Test func signInResponseCarriesTheNameAndItsNul() throws {
        let packet = Packet(.signInResponse(SignInResponse(name: "crazy joe")))
        let bytes = try packet.encoded()
        #expect(bytes.count == 20)
        #expect(bytes == hex("534e4150 00000000 0065 | 6372617a79206a6f65 00"))
        #expect(try Packet.decode(bytes) == packet)
    }

    static let vectors: [(Packet, String)] = [
        (
            Packet(.hello(Hello(game: .puck, seats: 2, name: "bo"))),
            "534e4150 00000000 0001 | 0001 02 02 00000000 | 00000000000000000000000000000000 | 0000000000000000"
                + " | 626f00 | " + String(repeating: "00", count: 29)
        ),
        (
            Packet(.challenge(Challenge(cookie: Cookie(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10)))),
            "534e4150 00000000 0002 | 0102030405060708 090a0b0c0d0e0f10"
        ),
        (
            Packet(
                number: 1,
                .welcome(
                    Welcome(
                        peer: 7, match: 42, seat: 1, tickRate: 60, resumeToken: 99,
                        sessionKey: SessionKey(key0: 0x0706_0504_0302_0100, key1: 0x0F0E_0D0C_0B0A_0908)))),
            "534e4150 00000001 0003 | 00000007 | 0000002a | 01 | 003c | 0000000000000063"
                + " | 0706050403020100 | 0f0e0d0c0b0a0908"
        ),
        (
            Packet(.reject(Reject(reason: .serverFull, text: "full"))),
            "534e4150 00000000 0004 | 0003 | 66756c6c 00"
        ),
        (Packet(.ack(Ack(cumulative: 5, bitfield: 0b1011))), "534e4150 00000000 0005 | 00000005 | 0000000b"),
        (
            Packet(number: 3, .ping(Ping(player: 7, count: 2, sendTime: 1.5))),
            "534e4150 00000003 0006 | 00000007 | 00000002 | 3ff8000000000000"
        ),
        (
            Packet(number: 3, .pong(Ping(player: 7, count: 2, sendTime: 1.5))),
            "534e4150 00000003 0007 | 00000007 | 00000002 | 3ff8000000000000"
        ),
        (Packet(.disconnect(Disconnect(reason: .quit))), "534e4150 00000000 0008 | 0001"),
        (Packet(number: 2, .chat(Chat(text: "gl hf"))), "534e4150 00000002 0009 | 676c206866 00"),
        (
            Packet(
                number: 1,
                .serverReady(
                    ServerReady(players: [
                        .init(peer: 7, position: 0, name: "ann"), .init(peer: 9, position: 1, name: "bob"),
                    ]))),
            "534e4150 00000001 0066 | 02 | 00000007 00 616e6e00 | 00000009 01 626f6200"
        ),
        (Packet(number: 4, .clientReady), "534e4150 00000004 0067"),
        (
            Packet(
                number: 2,
                .dealCards(
                    DealCards(hands: [
                        .init(peer: 7, cards: [Card(rawValue: 0)!, Card(rawValue: 51)!]),
                        .init(peer: 9, cards: [Card(suit: 0, rank: 12)!]),
                    ]))),
            "534e4150 00000002 0068 | 02 | 00000007 02 00 33 | 00000009 01 0c"
        ),
        (Packet(number: 5, .clientDealtCards), "534e4150 00000005 0069"),
        (Packet(number: 3, .activatePlayer(PeerRef(peer: 7))), "534e4150 00000003 006a | 00000007"),
        (Packet(number: 6, .clientTurnedCard), "534e4150 00000006 006b"),
        (Packet(number: 7, .playerShouldSnap), "534e4150 00000007 006c"),
        (
            Packet(number: 4, .playerCalledSnap(PlayerCalledSnap(peer: 7, outcome: .wrong, stateHash: 0xDEAD_BEEF))),
            "534e4150 00000004 006d | 00000007 | 01 | deadbeef"
        ),
        (Packet(number: 5, .otherClientQuit(PeerRef(peer: 9))), "534e4150 00000005 006e | 00000009"),
        (Packet(number: 6, .serverQuit), "534e4150 00000006 006f"),
        (Packet(number: 8, .clientQuit), "534e4150 00000008 0070"),
        (
            Packet(number: 7, .cardTurned(CardTurned(peer: 7, card: Card(suit: 1, rank: 0)!, stateHash: 0x1234_5678))),
            "534e4150 00000007 0071 | 00000007 | 0d | 12345678"
        ),
        (
            Packet(number: 8, .snapGameOver(SnapGameOver(winner: 9, stateHash: 0xCAFE_BABE))),
            "534e4150 00000008 0072 | 00000009 | cafebabe"
        ),
        (
            Packet(number: 5, .paddleState(PaddleState(inputStep: 4, x: 160, y: 400, vx: 1, vy: -1))),
            "534e4150 00000005 00c8 | 00000004 | 43200000 | 43c80000 | 3f800000 | bf800000"
        ),
        (
            Packet(
                number: 9,
                .tableSnapshot(
                    TableSnapshot(
                        tick: 10, lastInputStep: 4, me: .init(x: 160, y: 400, vx: 0, vy: 0),
                        them: .init(x: 160, y: 80, vx: 0, vy: 0),
                        puck: .init(x: 160, y: 240, vx: 2, vy: -3, angle: 0, spin: 0), myScore: 1, theirScore: 0,
                        phase: .playing, stateHash: 0x0BAD_F00D))),
            "534e4150 00000009 00c9 | 0000000a | 00000004 | 43200000 43c80000 00000000 00000000"
                + " | 43200000 42a00000 00000000 00000000 | 43200000 43700000 40000000 c0400000 00000000 00000000"
                + " | 01 | 00 | 01 | 0badf00d"
        ),
        (
            Packet(number: 9, .goalScored(GoalScored(tick: 1000, scorer: .them, myScore: 2, theirScore: 3))),
            "534e4150 00000009 00ca | 000003e8 | 01 | 02 | 03"
        ),
        (
            Packet(number: 10, .puckMatchOver(PuckMatchOver(winner: .me, myScore: 7, theirScore: 5))),
            "534e4150 0000000a 00cb | 00 | 07 | 05"
        ),
        (
            Packet(
                number: 1, .sunsStart(SunsStart(coinToss: 42, suns: [.init(x: 0.5, y: 0.25), .init(x: 0.75, y: 1)]))),
            "534e4150 00000001 012c | 0000002a | 02 | 3f000000 3e800000 | 3f400000 3f800000"
        ),
        (
            Packet(number: 2, .sunsStrike(SunsStrike(x: 0.5, y: 0.5, radius: 0.125))),
            "534e4150 00000002 012d | 3f000000 | 3f000000 | 3e000000"
        ),
        (
            Packet(number: 3, .sunsCapture(SunsCapture(sunIndex: 3, gameTime: 2.5))),
            "534e4150 00000003 012e | 00000003 | 40200000"
        ),
        (
            Packet(
                number: 4,
                .sunsTally(
                    SunsTally(entries: [.init(owner: 0, time: 1), .init(owner: SunsTally.Entry.unowned, time: 0)]))
            ),
            "534e4150 00000004 012f | 02 | 00 3f800000 | ff 00000000"
        ),
        (Packet(number: 5, .game(GamePayload(bytes: [1, 0x15, 0]))), "534e4150 00000005 0400 | 01 15 00"),
        (Packet(number: 6, .game(GamePayload(reliable: false, bytes: []))), "534e4150 00000006 0401"),
    ]

    @Test(arguments: vectors)
    func encodesAndDecodesTheHandCheckedVector(packet: Packet, vector: String) throws {
        let bytes = try packet.encoded()
        #expect(hexString(bytes) == hexString(hex(vector)), "\(packet.message.type.name)")
        #expect(try Packet.decode(hex(vector)) == packet)
    }

    @Test func everyMessageTypeHasAVector() {
        let covered = Set(Self.vectors.map(\.0.message.type)).union([.signInRequest, .signInResponse])
        #expect(covered == Set(MessageType.allCases))
    }

    @Test func helloIsPaddedToSixtyFourPayloadBytesAndNoReplyIsLarger() throws {
        let shortest = try Packet(.hello(Hello(game: .snap, seats: 3, name: ""))).encoded()
        #expect(shortest.count == PacketHeader.size + WireLimits.helloPayloadSize)
        let longestName = String(repeating: "n", count: WireLimits.maxName)
        let longest = try Packet(.hello(Hello(game: .snap, seats: 3, name: longestName))).encoded()
        #expect(longest.count == PacketHeader.size + Hello.fixedSizeForTests + WireLimits.maxName + 1)
        let challenge = try Packet(.challenge(Challenge(cookie: .zero))).encoded()
        let longestReject = try Packet(
            .reject(Reject(reason: .badCookie, text: String(repeating: "r", count: WireLimits.maxRejectText)))
        ).encoded()
        #expect(challenge.count < shortest.count)
        #expect(longestReject.count < shortest.count)
    }
}

extension Hello {
    static var fixedSizeForTests: Int { 2 + 1 + 1 + 4 + 16 + 8 }
}
