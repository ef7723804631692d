/// Reads big-endian fields from a borrowed byte view, throwing instead of reading past the end.
///
/// Every read checks the remaining length first, so no input can make it touch memory outside `bytes`.
@usableFromInline
struct WireReader {
    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var offset: Int

    @inlinable
    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.offset = 0
    }

    @inlinable
    var remaining: Int { bytes.count - offset }

    @inlinable
    mutating func header() throws(DecodeError) -> PacketHeader {
        guard remaining >= PacketHeader.size else { throw .tooShort }
        guard try u32() == PacketHeader.magic else { throw .badMagic }
        let number = try u32()
        guard let type = MessageType(rawValue: try u16()) else { throw .unknownType }
        return PacketHeader(number: number, type: type)
    }

    @inlinable
    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(DecodeError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw .truncatedPayload }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(bigEndian: value)
    }

    @inlinable mutating func u8() throws(DecodeError) -> UInt8 { try integer(UInt8.self) }
    @inlinable mutating func u16() throws(DecodeError) -> UInt16 { try integer(UInt16.self) }
    @inlinable mutating func u32() throws(DecodeError) -> UInt32 { try integer(UInt32.self) }
    @inlinable mutating func u64() throws(DecodeError) -> UInt64 { try integer(UInt64.self) }

    @inlinable
    mutating func bool() throws(DecodeError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        default: throw .badValue
        }
    }

    /// A finite `f32`; NaN and infinities are `badValue`.
    @inlinable
    mutating func f32() throws(DecodeError) -> Float {
        let value = Float(bitPattern: try u32())
        guard value.isFinite else { throw .badValue }
        return value
    }

    /// A finite `f32` in `range`.
    @inlinable
    mutating func f32(in range: ClosedRange<Float>) throws(DecodeError) -> Float {
        let value = try f32()
        guard range.contains(value) else { throw .badValue }
        return value
    }

    /// A finite `f64`; NaN and infinities are `badValue`.
    @inlinable
    mutating func f64() throws(DecodeError) -> Double {
        let value = Double(bitPattern: try u64())
        guard value.isFinite else { throw .badValue }
        return value
    }

    /// A card byte, 0–51.
    @inlinable
    mutating func card() throws(DecodeError) -> Card {
        guard let card = Card(rawValue: try u8()) else { throw .badValue }
        return card
    }

    /// A count byte no larger than `limit`.
    @inlinable
    mutating func count(limit: Int) throws(DecodeError) -> Int {
        let n = Int(try u8())
        guard n <= limit else { throw .tooLarge }
        return n
    }

    /// A UTF-8 string ending in one NUL, at most `limit` bytes before the NUL.
    ///
    /// No NUL within `limit + 1` bytes is `tooLarge` when more bytes follow, `truncatedPayload` when the packet ends.
    mutating func string(limit: Int) throws(DecodeError) -> String {
        let window = min(remaining, limit + 1)
        var length = 0
        while length < window, bytes[offset + length] != 0 {
            length += 1
        }
        guard length < window else {
            throw remaining > limit ? .tooLarge : .truncatedPayload
        }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        guard let text = String(validating: slice, as: UTF8.self) else { throw .badString }
        offset += length + 1
        return text
    }

    /// Throws `trailingBytes` unless every byte has been read.
    @inlinable
    func finish() throws(DecodeError) {
        guard remaining == 0 else { throw .trailingBytes }
    }
}
