import Testing

@testable import SkirmishDDNet

@Suite struct VarIntTests {
    /// Encodings from the layout in `compression.cpp` (`ESDDDDDD EDDDDDDD …`).
    static let vectors: [(Int32, [UInt8])] = [
        (0, [0x00]), (63, [0x3F]), (64, [0x80, 0x01]), (-1, [0x40]), (-64, [0x7F]), (-65, [0xC0, 0x01]),
        (8_191, [0xBF, 0x7F]), (8_192, [0x80, 0x80, 0x01]),
        (Int32.max, [0xBF, 0xFF, 0xFF, 0xFF, 0x0F]), (Int32.min, [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
    ]

    @Test(arguments: vectors)
    func packsAndUnpacks(value: Int32, bytes: [UInt8]) throws {
        var buffer = [UInt8](repeating: 0, count: 8)
        let end = buffer.withUnsafeMutableBytes { VarInt.pack(value, into: $0, at: 0) }
        #expect(Array(buffer[..<(end ?? 0)]) == bytes)
        let decoded = try #require(bytes.withUnsafeBytes { VarInt.unpack($0, at: 0) })
        #expect(decoded.value == value && decoded.next == bytes.count)
    }

    @Test func aCutOffIntegerIsRefused() {
        #expect([UInt8(0x80)].withUnsafeBytes { VarInt.unpack($0, at: 0) } == nil)
        #expect([UInt8]().withUnsafeBytes { VarInt.unpack($0, at: 0) } == nil)
        var tooSmall = [UInt8](repeating: 0, count: 1)
        #expect(tooSmall.withUnsafeMutableBytes { VarInt.pack(64, into: $0, at: 0) } == nil)
    }

    @Test func packerAndUnpackerRoundTripFields() {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { raw in
            var packer = Packer(raw)
            packer.int(Int32(-5))
            packer.string("héllo\u{0}cut", limit: 100)
            packer.string("abcdef", limit: 3)
            packer.raw([1, 2, 3])
            return packer.failed ? -1 : packer.count
        }
        #expect(count == 1 + 7 + 4 + 3)
        buffer.withUnsafeBytes { raw in
            var unpacker = Unpacker(UnsafeRawBufferPointer(rebasing: raw[..<count]))
            #expect(unpacker.int() == -5)
            #expect(unpacker.string().map { Unpacker.text($0) } == "héllo")
            #expect(unpacker.string().map { Unpacker.text($0) } == "abc")
            #expect(unpacker.raw(3).map(Array.init) == [1, 2, 3])
            #expect(!unpacker.failed && unpacker.remaining == 0)
            _ = unpacker.int()
            #expect(unpacker.failed)
        }
    }
}

@Suite struct HeaderTests {
    @Test func packetHeaderSplitsTheAcknowledgement() throws {
        var bytes = [UInt8](repeating: 0, count: 3)
        let header = PacketHeader(flags: [.compression, .resend], ack: 0x2AB, chunkCount: 7)
        bytes.withUnsafeMutableBytes { header.write(into: $0) }
        // Flags 0b110000 << 2, the ack's top two bits 0b10.
        #expect(bytes == [0xC2, 0xAB, 7])
        #expect(bytes.withUnsafeBytes { PacketHeader($0) } == header)
        #expect([UInt8](repeating: 0, count: 2).withUnsafeBytes { PacketHeader($0) } == nil)
        #expect([UInt8](repeating: 0, count: 1_401).withUnsafeBytes { PacketHeader($0) } == nil)
    }

    @Test func vitalChunkHeaderCarriesTenBitsOfSequence() throws {
        var bytes = [UInt8](repeating: 0, count: 3)
        let header = ChunkHeader(flags: ChunkHeader.vital, size: 0x135, sequence: 0x2C7)
        let end = bytes.withUnsafeMutableBytes { header.write(into: $0, at: 0) }
        #expect(end == 3)
        #expect(bytes == [0x40 | 0x13, 0xB5, 0xC7])
        #expect(bytes.withUnsafeBytes { ChunkHeader($0, at: 0) } == header)
        let plain = ChunkHeader(flags: 0, size: 5, sequence: -1)
        #expect(plain.length == 2)
        #expect([UInt8(0x40), 0x01].withUnsafeBytes { ChunkHeader($0, at: 0) } == nil, "a vital header needs 3 bytes")
    }

    @Test func sequencesBehindTheAcknowledgementAreDuplicates() {
        #expect(ChunkHeader.isBehind(5, ack: 5))
        #expect(ChunkHeader.isBehind(1_000, ack: 5), "wrapped: 1000 is 29 behind 5")
        #expect(!ChunkHeader.isBehind(6, ack: 5))
        #expect(!ChunkHeader.isBehind(400, ack: 5))
        #expect(ChunkHeader.isBehind(300, ack: 700) && !ChunkHeader.isBehind(100, ack: 700))
    }
}

@Suite struct HuffmanTests {
    /// Symbol 0's frequency, 2^30, outweighs all others together, so the last join puts it alone on the 1 branch.
    @Test func theCommonestByteIsOneBit() {
        #expect(Huffman.code.lengths[0] == 1)
        #expect(Huffman.code.bits[0] == 1)
        var output = [UInt8](repeating: 0, count: 16)
        let count = [UInt8](repeating: 0, count: 8).withUnsafeBytes { input in
            output.withUnsafeMutableBytes { Huffman.compress(input, into: $0) }
        }
        #expect(count != nil && output[0] == 0xFF, "eight zero bytes are eight 1 bits")
    }

    /// A complete prefix code: Kraft's sum is exactly 1 and no code is a prefix of another.
    @Test func theCodeIsACompletePrefixCode() {
        let code = Huffman.code
        var kraft = 0.0
        for symbol in 0...256 { kraft += 1 / Double(1 << Int(code.lengths[symbol])) }
        #expect(abs(kraft - 1) < 1e-12)
        var seen = Set<String>()
        for symbol in 0...256 {
            let bits = (0..<Int(code.lengths[symbol])).map { code.bits[symbol] >> UInt32($0) & 1 == 1 ? "1" : "0" }
            seen.insert(bits.joined())
        }
        #expect(seen.count == 257)
        for a in seen { for b in seen where a != b { #expect(!b.hasPrefix(a)) } }
    }

    @Test(arguments: [0, 1, 2, 17, 300, 1_390])
    func roundTrips(length: Int) throws {
        var state: UInt64 = UInt64(length) &+ 99
        let input = (0..<length).map { _ -> UInt8 in
            state = state &* 6_364_136_223_846_793_005 &+ 1
            return state >> 60 == 0 ? UInt8(truncatingIfNeeded: state >> 33) : 0
        }
        var compressed = [UInt8](repeating: 0, count: 4_096)
        let size = try #require(
            input.withUnsafeBytes { raw in compressed.withUnsafeMutableBytes { Huffman.compress(raw, into: $0) } })
        var output = [UInt8](repeating: 0, count: 2_048)
        let count = try compressed.withUnsafeBytes { raw in
            try output.withUnsafeMutableBytes {
                try Huffman.decompress(UnsafeRawBufferPointer(rebasing: raw[..<size]), into: $0)
            }
        }
        #expect(Array(output[..<count]) == input)
    }

    @Test func damagedStreamsAreRefused() {
        var output = [UInt8](repeating: 0, count: 4)
        #expect(throws: DecodeError.badHuffman) {
            try [UInt8]().withUnsafeBytes { raw in
                try output.withUnsafeMutableBytes { try Huffman.decompress(raw, into: $0) }
            }
        }
        // Forty 1 bits are forty zero bytes: more than the output holds.
        #expect(throws: DecodeError.badHuffman) {
            try [UInt8](repeating: 0xFF, count: 5).withUnsafeBytes { raw in
                try output.withUnsafeMutableBytes { try Huffman.decompress(raw, into: $0) }
            }
        }
    }
}
