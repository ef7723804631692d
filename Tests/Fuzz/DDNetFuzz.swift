// libFuzzer entry point for the DDNet decoders, built by `make fuzz-ddnet` together with the stdlib-only sources in
// Sources/SkirmishDDNet/Codec.
//
// Oracles: decoding never traps or reads out of bounds (AddressSanitizer watches); what Huffman decodes compresses
// back to bytes that decode to the same; a decoded snapshot's items stay within its limits.

/// Called by libFuzzer with each generated input (`size` bytes at `data`); returns 0, or traps on a broken oracle.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDDNet(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var payload = [UInt8](repeating: 0, count: PacketHeader.maxPacketSize)

    // A datagram, with and without a token, and its chunks and messages.
    for token in [nil, UInt32(0x1234_5678)] as [UInt32?] {
        guard
            let (header, count) = payload.withUnsafeMutableBytes({
                try? PacketCodec.decode(bytes, token: token, into: $0)
            })
        else { continue }
        payload.withUnsafeBytes { raw in
            var reader = ChunkReader(UnsafeRawBufferPointer(rebasing: raw[..<count]), count: header.chunkCount)
            while let chunk = try? reader.next() {
                var unpacker = Unpacker(chunk.data)
                for _ in 0..<8 {
                    _ = unpacker.int()
                    _ = unpacker.string()
                }
            }
        }
    }

    // Huffman: whatever decodes must survive a round trip.
    if let count = payload.withUnsafeMutableBytes({ try? Huffman.decompress(bytes, into: $0) }) {
        var compressed = [UInt8](repeating: 0, count: 4 * PacketHeader.maxPacketSize)
        var again = [UInt8](repeating: 0, count: PacketHeader.maxPacketSize)
        let size = payload.withUnsafeBytes { raw in
            compressed.withUnsafeMutableBytes {
                Huffman.compress(UnsafeRawBufferPointer(rebasing: raw[..<count]), into: $0)
            }
        }
        guard let size else { fatalError("decoded \(count) bytes that do not compress") }
        let recount = compressed.withUnsafeBytes { raw in
            again.withUnsafeMutableBytes {
                try? Huffman.decompress(UnsafeRawBufferPointer(rebasing: raw[..<size]), into: $0)
            }
        }
        guard recount == count, again[..<count].elementsEqual(payload[..<count]) else {
            fatalError("Huffman round trip changed \(count) bytes")
        }
    }

    // A snapshot payload: varints, then a delta against the empty snapshot and against what that made.
    var words = [Int32](repeating: 0, count: Snapshot.maxWords)
    if let count = words.withUnsafeMutableBufferPointer({ VarInt.decompress(bytes, into: $0) }) {
        var delta = SnapshotDelta()
        var first = Snapshot()
        var second = Snapshot()
        words.withUnsafeBufferPointer { all in
            let input = UnsafeBufferPointer(rebasing: all[..<count])
            if (try? delta.apply(input, to: Snapshot(), into: &first)) != nil {
                _ = try? delta.apply(input, to: first, into: &second)
                guard first.count < Snapshot.maxItems, first.data.count < Snapshot.maxWords else {
                    fatalError("a snapshot past its limits")
                }
                _ = first.crc
            }
        }
    }

    // Snapshot parts.
    var assembler = SnapshotAssembler()
    if size >= 2 {
        let part = SnapshotAssembler.Part(
            tick: Int32(bytes[0]), count: Int(bytes[1] & 0x7F), index: Int(bytes[0] & 0x3F),
            data: UnsafeRawBufferPointer(rebasing: bytes[2..<min(size, 902)]))
        _ = try? assembler.add(part)
    }
    return 0
}
