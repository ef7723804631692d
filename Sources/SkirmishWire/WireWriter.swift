/// Writes big-endian fields into a caller-provided buffer, throwing instead of writing past its end.
@usableFromInline
struct WireWriter {
    @usableFromInline let bytes: UnsafeMutableRawBufferPointer
    @usableFromInline var offset: Int

    @inlinable
    init(_ bytes: UnsafeMutableRawBufferPointer) {
        self.bytes = bytes
        self.offset = 0
    }

    @inlinable
    mutating func reserve(_ size: Int) throws(EncodeError) {
        guard bytes.count - offset >= size else { throw .bufferTooSmall(needed: offset + size) }
    }

    @inlinable
    mutating func integer<T: FixedWidthInteger>(_ value: T) throws(EncodeError) {
        let size = MemoryLayout<T>.size
        try reserve(size)
        bytes.storeBytes(of: value.bigEndian, toByteOffset: offset, as: T.self)
        offset += size
    }

    @inlinable mutating func u8(_ value: UInt8) throws(EncodeError) { try integer(value) }
    @inlinable mutating func u16(_ value: UInt16) throws(EncodeError) { try integer(value) }
    @inlinable mutating func u32(_ value: UInt32) throws(EncodeError) { try integer(value) }
    @inlinable mutating func u64(_ value: UInt64) throws(EncodeError) { try integer(value) }

    @inlinable
    mutating func bool(_ value: Bool) throws(EncodeError) { try u8(value ? 1 : 0) }

    @inlinable
    mutating func f32(_ value: Float) throws(EncodeError) {
        guard value.isFinite else { throw .badValue }
        try u32(value.bitPattern)
    }

    @inlinable
    mutating func f32(_ value: Float, in range: ClosedRange<Float>) throws(EncodeError) {
        guard range.contains(value) else { throw .badValue }
        try f32(value)
    }

    @inlinable
    mutating func f64(_ value: Double) throws(EncodeError) {
        guard value.isFinite else { throw .badValue }
        try u64(value.bitPattern)
    }

    @inlinable
    mutating func card(_ card: Card) throws(EncodeError) { try u8(card.rawValue) }

    @inlinable
    mutating func count(_ n: Int, limit: Int) throws(EncodeError) {
        guard n <= limit else { throw .tooManyElements }
        try u8(UInt8(n))
    }

    mutating func string(_ text: String, limit: Int) throws(EncodeError) {
        let utf8 = text.utf8
        let length = utf8.count
        guard length <= limit else { throw .stringTooLong }
        try reserve(length + 1)
        for byte in utf8 {
            guard byte != 0 else { throw .stringContainsNul }
            bytes[offset] = byte
            offset += 1
        }
        bytes[offset] = 0
        offset += 1
    }

    @inlinable
    mutating func zeros(_ count: Int) throws(EncodeError) {
        guard count > 0 else { return }
        try reserve(count)
        UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<offset + count])
            .initializeMemory(as: UInt8.self, repeating: 0)
        offset += count
    }
}
