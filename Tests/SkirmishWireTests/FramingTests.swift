import SkirmishWire
import Testing

@Suite struct FramingTests {
    /// A stream of several framed packets of different sizes.
    static func stream() throws -> (bytes: [UInt8], packets: [Packet]) {
        let packets: [Packet] = [
            Packet(.signInRequest),
            Packet(.hello(Hello(game: .snap, seats: 3, name: "crazy joe"))),
            Packet(.chat(Chat(text: String(repeating: "é", count: 100)))),
            Packet(.ack(Ack(cumulative: 1, bitfield: 2))),
            Packet(.tableSnapshot(Arbitrary(seed: 9).withMessage(.tableSnapshot))),
        ]
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: WireLimits.maxFrame + 4)
        for packet in packets {
            let size = try buffer.withUnsafeMutableBytes { try FrameDecoder.encode(packet, into: $0) }
            bytes += buffer[..<size]
        }
        return (bytes, packets)
    }

    @Test func everySplitPointYieldsTheSamePackets() throws {
        let (bytes, packets) = try Self.stream()
        for split in 0...bytes.count {
            var decoder = FrameDecoder()
            var out: [Packet] = []
            for chunk in [bytes[..<split], bytes[split...]] {
                decoder.append(chunk)
                while let frame = try decoder.next() {
                    out.append(try Packet.decode(Array(frame)))
                }
            }
            #expect(out == packets, "split at \(split)")
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func oneByteAtATimeAndEveryPairOfSplits() throws {
        let (bytes, packets) = try Self.stream()
        var decoder = FrameDecoder()
        var out: [Packet] = []
        for byte in bytes {
            decoder.append(CollectionOfOne(byte))
            while let frame = try decoder.next() { out.append(try Packet.decode(Array(frame))) }
        }
        #expect(out == packets)
        for first in stride(from: 0, through: bytes.count, by: 7) {
            for second in stride(from: first, through: bytes.count, by: 11) {
                var decoder = FrameDecoder()
                var out: [Packet] = []
                for chunk in [bytes[..<first], bytes[first..<second], bytes[second...]] {
                    decoder.append(chunk)
                    while let frame = try decoder.next() { out.append(try Packet.decode(Array(frame))) }
                }
                #expect(out == packets)
            }
        }
    }

    @Test func anOversizeFrameIsRefusedFromItsPrefixAlone() throws {
        var decoder = FrameDecoder()
        decoder.append([0x00, 0x01, 0x00, 0x01]) // 65,537 bytes announced, no body sent
        #expect(throws: FrameDecoder.Error.frameTooLarge(length: 65_537)) { _ = try decoder.next() }
        #expect(decoder.bufferedByteCount == 4)
        var small = FrameDecoder(maxFrameSize: 100)
        small.append([0x00, 0x00, 0x00, 0x65])
        #expect(throws: FrameDecoder.Error.frameTooLarge(length: 101)) { _ = try small.next() }
    }

    @Test func aPartialFrameWaitsForTheRest() throws {
        var decoder = FrameDecoder()
        decoder.append([0x00, 0x00, 0x00, 0x0A, 0x53, 0x4E])
        #expect(try decoder.next() == nil)
        decoder.append([0x41, 0x50, 0, 0, 0, 0, 0x00, 0x64])
        let frame = try #require(try decoder.next())
        #expect(try Packet.decode(Array(frame)) == Packet(.signInRequest))
    }
}
