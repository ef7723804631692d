import SkirmishWire
import Testing

/// The datagram trailer of a session (``SessionKey``) and the SipHash-2-4 it is made of; the vectors are the ones in
/// `WireProtocol.md`, computed by an independent implementation.
@Suite struct SessionKeyTests {
    static let key = SessionKey(key0: 0x0706_0504_0302_0100, key1: 0x0F0E_0D0C_0B0A_0908)

    /// The reference vectors from the SipHash paper (key 00 01 … 0f, messages 00 01 … of length n).
    @Test(arguments: [(0, UInt64(0x726F_DB47_DD0E_0E31)), (7, 0xAB02_00F5_8B01_D137), (15, 0xA129_CA61_49BE_45E5)])
    func sipHashMatchesTheReferenceVectors(length: Int, expected: UInt64) {
        var hash = SipHash(key0: 0x0706_0504_0302_0100, key1: 0x0F0E_0D0C_0B0A_0908)
        hash.combine((0..<UInt8(length)).map { $0 })
        #expect(hash.finalize() == expected)
    }

    /// The word-at-a-time path (datagrams) and the byte path (cookies) agree for every length and split.
    @Test func sipHashOverABufferEqualsSipHashByteByByte() {
        let message = (0..<UInt8(70)).map { $0 &* 37 &+ 11 }
        for length in 0...message.count {
            var bytewise = SipHash(key0: 1, key1: 2)
            bytewise.combine(message[0..<length])
            var wordwise = SipHash(key0: 1, key1: 2)
            let split = length / 3
            wordwise.combine(message[0..<split]) // leaves a partial word for the buffer path to finish
            message[split..<length].withUnsafeBytes { wordwise.combine($0) }
            #expect(bytewise.finalize() == wordwise.finalize(), "length \(length)")
        }
    }

    @Test(arguments: [
        (
            Packet(.disconnect(Disconnect(reason: .quit))), Role.client, "534e4150 00000000 0008 | 0001",
            "7ada1ead58815684"
        ),
        (
            Packet(.disconnect(Disconnect(reason: .quit))), Role.server, "534e4150 00000000 0008 | 0001",
            "476636da48f39d48"
        ),
        (
            Packet(number: 2, .paddleState(PaddleState(inputStep: 1, x: 160, y: 400, vx: 0, vy: 0))), Role.client,
            "534e4150 00000002 00c8 | 00000001 | 43200000 | 43c80000 | 00000000 | 00000000", "d0bd21e608fe6302"
        ),
    ])
    func aSealedDatagramMatchesTheSpecVector(packet: Packet, sender: Role, body: String, trailer: String) throws {
        let encoded = try packet.encoded()
        #expect(encoded == hex(body))
        var buffer = [UInt8](repeating: 0, count: 64)
        let length = try #require(
            buffer.withUnsafeMutableBytes { raw in
                encoded.withUnsafeBytes { raw.copyMemory(from: $0) }
                return Self.key.seal(raw, length: encoded.count, from: sender)
            })
        let datagram = Array(buffer[0..<length])
        #expect(hexString(datagram) == hexString(hex(body + trailer)))
        let opened = datagram.withUnsafeBytes { Self.key.open($0, from: sender).map { Array($0) } }
        #expect(opened == encoded)
    }

    @Test func aTrailerFromTheOtherSideAnotherKeyOrAnyFlippedBitDoesNotOpen() throws {
        let encoded = try Packet(.disconnect(Disconnect(reason: .quit))).encoded()
        let sealed = encoded + hex("7ada1ead58815684")
        #expect(sealed.withUnsafeBytes { Self.key.open($0, from: .client) } != nil)
        #expect(sealed.withUnsafeBytes { Self.key.open($0, from: .server) } == nil, "reflected to its sender")
        let other = SessionKey(key0: 1, key1: 2)
        #expect(sealed.withUnsafeBytes { other.open($0, from: .client) } == nil)
        #expect(encoded.withUnsafeBytes { Self.key.open($0, from: .client) } == nil, "no trailer at all")
        for bit in 0..<(sealed.count * 8) {
            var flipped = sealed
            flipped[bit / 8] ^= 1 << UInt8(bit % 8)
            #expect(flipped.withUnsafeBytes { Self.key.open($0, from: .client) } == nil, "bit \(bit)")
        }
    }

    @Test func sealingNeedsRoomForTheTrailer() {
        var buffer = [UInt8](repeating: 0, count: 15)
        #expect(buffer.withUnsafeMutableBytes { Self.key.seal($0, length: 10, from: .client) } == nil)
        #expect(buffer.withUnsafeMutableBytes { Self.key.seal($0, length: 7, from: .client) } == 15)
    }

    @Test func freshKeysAreNeitherZeroNorRepeated() {
        let keys = (0..<1_000).map { _ in SessionKey.random() }
        #expect(!keys.contains(.zero))
        #expect(Set(keys).count == keys.count)
    }
}

@Suite struct PlayerNameTests {
    @Test(arguments: [
        "a\u{202E}gnp.exe", "x\u{2066}y", "x\u{2069}", "left\u{200E}", "\u{061C}", "line\nbreak", "tab\there",
        "\u{1B}[31mred", "del\u{7F}", "c1\u{85}", "para\u{2029}",
    ])
    func controlAndBidiCharactersAreRefused(name: String) {
        #expect(!PlayerName.isAcceptable(name))
    }

    @Test(arguments: ["bo", "crazy joe", "Zoë", "Łukasz", "山田", "محمد", "🏒 ace", "O'Neil-Smith"])
    func ordinaryNamesOfEveryScriptPass(name: String) {
        #expect(PlayerName.isAcceptable(name))
    }

    @Test func reasonCodesThisBuildDoesNotNameAreNotKnown() {
        #expect(RejectReason.badName.isKnown && RejectReason.seatInUse.isKnown)
        #expect(!RejectReason(rawValue: 0).isKnown && !RejectReason(rawValue: 999).isKnown)
        #expect(DisconnectReason.resumedElsewhere.isKnown && !DisconnectReason(rawValue: 77).isKnown)
    }
}
