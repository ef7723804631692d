/// The header of one chunk (one message) inside a packet (`CNetChunkHeader` in `src/engine/shared/network.cpp`):
/// two flag bits and a 10-bit size, then for a vital chunk a 10-bit sequence number.
///
/// Byte 0 is `FFSSSSSS` (flags, size bits 9…4), byte 1 `QQQQSSSS` (sequence bits 9…6 in its high nibble, size bits
/// 3…0), byte 2 the sequence's low byte. 0.6 uses a split of 4; 0.7's split of 6 never reaches a 0.6 client.
struct ChunkHeader: Hashable {
    /// The chunk must arrive, in order (`NET_CHUNKFLAG_VITAL`).
    static let vital = 1
    /// The chunk is a resend (`NET_CHUNKFLAG_RESEND`).
    static let resend = 2
    /// The longest header (`NET_MAX_CHUNKHEADERSIZE` reserves 5, 0.6 writes at most 3).
    static let maxSize = 3
    /// Vital sequence numbers wrap at 1024 (`NET_MAX_SEQUENCE`).
    static let sequenceModulus = 1024

    var flags: Int
    var size: Int
    /// The vital sequence number; -1 for a chunk that is not vital.
    var sequence: Int

    /// Whether the chunk is vital.
    var isVital: Bool { flags & Self.vital != 0 }
    /// The header's length on the wire.
    var length: Int { isVital ? 3 : 2 }

    /// A header with these fields.
    init(flags: Int, size: Int, sequence: Int) {
        self.flags = flags
        self.size = size
        self.sequence = sequence
    }

    /// Reads a header at `offset` of `payload`; `nil` when it is cut off.
    init?(_ payload: UnsafeRawBufferPointer, at offset: Int) {
        guard offset >= 0, offset + 2 <= payload.count else { return nil }
        let first = payload[offset]
        let second = payload[offset + 1]
        flags = Int(first >> 6) & 3
        size = Int(first & 0x3F) << 4 | Int(second & 0x0F)
        if flags & Self.vital != 0 {
            guard offset + 3 <= payload.count else { return nil }
            sequence = Int(second & 0xF0) << 2 | Int(payload[offset + 2])
        } else {
            sequence = -1
        }
    }

    /// Writes the header at `offset`; returns the offset after it, or `nil` when it does not fit.
    func write(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int? {
        guard offset >= 0, offset + length <= buffer.count else { return nil }
        buffer[offset] = UInt8((flags & 3) << 6 | (size >> 4) & 0x3F)
        buffer[offset + 1] = UInt8(size & 0x0F)
        if isVital {
            buffer[offset + 1] |= UInt8((sequence >> 2) & 0xF0)
            buffer[offset + 2] = UInt8(sequence & 0xFF)
        }
        return offset + length
    }

    /// Whether `sequence` is at most half the number space behind `ack`: already received, a duplicate
    /// (`CNetBase::IsSeqInBackroom`).
    static func isBehind(_ sequence: Int, ack: Int) -> Bool {
        let bottom = ack - sequenceModulus / 2
        if bottom < 0 {
            return sequence <= ack || sequence >= bottom + sequenceModulus
        }
        return sequence <= ack && sequence >= bottom
    }
}
