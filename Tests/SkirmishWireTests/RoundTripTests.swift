import SkirmishWire
import Testing

@Suite struct RoundTripTests {
    @Test(arguments: MessageType.allCases)
    func everyMessageRoundTripsOverSeededRandomValues(type: MessageType) throws {
        var arbitrary = Arbitrary(seed: UInt64(type.rawValue))
        for _ in 0..<2_000 {
            let packet = Packet(
                number: type.delivery == .handshake ? 0 : arbitrary.number(), arbitrary.message(type))
            let bytes = try packet.encoded()
            #expect(bytes.count <= WireLimits.maxDatagram)
            let decoded = try Packet.decode(bytes, maxSize: WireLimits.maxDatagram)
            #expect(decoded == packet)
            #expect(try PacketHeader.peek(bytes.withUnsafeBytes { $0 }) == packet.header)
        }
    }

    @Test func decodingOnlyAllocatesNothingItDoesNotReturn() throws {
        // Encoding into a stack buffer and decoding from it leaves the caller's bytes untouched.
        let packet = Packet(number: 3, .paddleState(PaddleState(inputStep: 1, x: 1, y: 2, vx: 3, vy: 4)))
        var storage = [UInt8](repeating: 0xAA, count: 64)
        let size = try storage.withUnsafeMutableBytes { try packet.encode(into: $0) }
        #expect(size == 30)
        #expect(storage[size...].allSatisfy { $0 == 0xAA })
        let decoded = try storage.withUnsafeBytes { try Packet.decode(UnsafeRawBufferPointer(rebasing: $0[..<size])) }
        #expect(decoded == packet)
    }

    @Test func encodingIntoATooSmallBufferSaysHowMuchIsNeeded() {
        let packet = Packet(number: 1, .tableSnapshot(Arbitrary(seed: 1).withMessage(.tableSnapshot)))
        var storage = [UInt8](repeating: 0, count: 40)
        #expect(throws: EncodeError.bufferTooSmall(needed: 81)) {
            _ = try storage.withUnsafeMutableBytes { try packet.encode(into: $0) }
        }
    }

    @Test func encodingRefusesWhatDecodingWouldRefuse() {
        let refusals: [(Packet, EncodeError)] = [
            (Packet(number: 1, .paddleState(PaddleState(inputStep: 0, x: .nan, y: 0, vx: 0, vy: 0))), .badValue),
            (Packet(number: 1, .ping(Ping(player: 0, count: 0, sendTime: .infinity))), .badValue),
            (Packet(number: 1, .chat(Chat(text: String(repeating: "x", count: 257)))), .stringTooLong),
            (Packet(number: 1, .chat(Chat(text: "a\u{0}b"))), .stringContainsNul),
            (Packet(number: 1, .sunsStrike(SunsStrike(x: 1.5, y: 0, radius: 0.1, gameTime: 0))), .badValue),
            (Packet(number: 1, .sunsStrike(SunsStrike(x: 0.5, y: 0, radius: 0, gameTime: 0))), .badValue),
            (Packet(number: 1, .sunsStrike(SunsStrike(x: 0.5, y: 0, radius: 0.1, gameTime: -1))), .badValue),
            (Packet(number: 1, .sunsStrike(SunsStrike(x: 0.5, y: 0, radius: 0.1, gameTime: 60))), .badValue),
            (Packet(number: 1, .sunsStrike(SunsStrike(x: 0.5, y: 0, radius: 0.1, gameTime: .nan))), .badValue),
            (Packet(number: 1, .sunsCapture(SunsCapture(sunIndex: 16, gameTime: 1))), .badValue),
            (Packet(number: 1, .sunsTally(SunsTally(entries: [.init(owner: 4, time: 1)]))), .badValue),
            (
                Packet(
                    number: 1, .sunsStart(SunsStart(coinToss: 0, suns: Array(repeating: .init(x: 0, y: 0), count: 17)))),
                .tooManyElements
            ),
            (
                Packet(number: 1, .serverReady(ServerReady(players: [.init(peer: 1, position: 1, name: "a")]))),
                .badValue
            ),
            (Packet(number: 7, .ack(Ack(cumulative: 1, bitfield: 0))), .badValue),
            (
                Packet(
                    number: 1,
                    .dealCards(
                        DealCards(hands: [
                            .init(peer: 1, cards: Card.deck), .init(peer: 2, cards: [Card(rawValue: 0)!]),
                        ]))), .tooManyElements
            ),
        ]
        for (packet, error) in refusals {
            #expect(throws: error, "\(packet.message.type.name)") { _ = try packet.encoded() }
        }
    }
}

extension Arbitrary {
    func withMessage(_ type: MessageType) -> TableSnapshot {
        var copy = self
        guard case .tableSnapshot(let snapshot) = copy.message(type) else { fatalError("not a snapshot") }
        return snapshot
    }
}
