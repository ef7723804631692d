/// Teeworlds' variable-length integers, the encoding of every message field and of snapshot deltas.
///
/// Layout (`src/engine/shared/compression.cpp`, `CVariableInt`): the first byte is `ESDDDDDD` (extend, sign, six
/// data bits), each following byte `EDDDDDDD`, least significant bits first, at most five bytes (the fifth carries
/// four bits). A negative value is stored as its complement with the sign bit set, so -1 is one byte, `0x40`.
enum VarInt {
    /// The longest encoding (`CVariableInt::MAX_BYTES_PACKED`).
    static let maxBytes = 5

    /// Writes `value` at `offset`; returns the offset after it, or `nil` when it does not fit.
    static func pack(_ value: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int? {
        var position = offset
        guard position >= 0, position < buffer.count else { return nil }
        var rest = UInt32(bitPattern: value < 0 ? ~value : value)
        var byte = UInt8(truncatingIfNeeded: rest & 0x3F) | (value < 0 ? 0x40 : 0)
        rest >>= 6
        while rest != 0 {
            guard position + 1 < buffer.count else { return nil }
            buffer[position] = byte | 0x80
            position += 1
            byte = UInt8(truncatingIfNeeded: rest & 0x7F)
            rest >>= 7
        }
        buffer[position] = byte
        return position + 1
    }

    /// Reads one integer at `offset`; `nil` when the bytes end inside it.
    ///
    /// A fifth byte contributes its low four bits and its extend bit is ignored, as `CVariableInt::Unpack` does.
    static func unpack(_ buffer: UnsafeRawBufferPointer, at offset: Int) -> (value: Int32, next: Int)? {
        guard offset >= 0, offset < buffer.count else { return nil }
        var position = offset
        var byte = buffer[position]
        let negative = byte & 0x40 != 0
        var value = UInt32(byte & 0x3F)
        var shift: UInt32 = 6
        while byte & 0x80 != 0 && shift <= 27 {
            position += 1
            guard position < buffer.count else { return nil }
            byte = buffer[position]
            value |= UInt32(byte & (shift == 27 ? 0x0F : 0x7F)) << shift
            shift += 7
        }
        let result = Int32(bitPattern: value)
        return (negative ? ~result : result, position + 1)
    }

    /// Decodes a run of varints into `output` (`CVariableInt::Decompress`, the snapshot payload's encoding); returns
    /// how many integers, or `nil` when the run is cut off or does not fit.
    static func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Int32>) -> Int? {
        var offset = 0
        var count = 0
        while offset < input.count {
            guard count < output.count, let (value, next) = unpack(input, at: offset) else { return nil }
            output[count] = value
            count += 1
            offset = next
        }
        return count
    }

    /// Encodes `input` as a run of varints (`CVariableInt::Compress`); returns the byte count, or `nil` when it does
    /// not fit. Tests and the fuzzer use it to build snapshot payloads.
    static func compress(_ input: UnsafeBufferPointer<Int32>, into output: UnsafeMutableRawBufferPointer) -> Int? {
        var offset = 0
        for value in input {
            guard let next = pack(value, into: output, at: offset) else { return nil }
            offset = next
        }
        return offset
    }
}
