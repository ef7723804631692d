/// Big-endian loads and stores on raw buffers at any alignment: the only way the wire layer touches bytes.
///
/// Every read is preceded by a bounds check in its caller (the reader checks the whole command's size first), so
/// these never read past the end; the precondition here is the last line of defence, not the check.
enum RawBytes {
    /// The big-endian `UInt16` at `offset`.
    @inline(__always)
    static func uint16(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt16 {
        precondition(offset >= 0 && offset + 2 <= bytes.count)
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    /// The big-endian `UInt32` at `offset`.
    @inline(__always)
    static func uint32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        precondition(offset >= 0 && offset + 4 <= bytes.count)
        return UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// Stores `value` big-endian at `offset`.
    @inline(__always)
    static func store(_ value: UInt16, _ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    /// Stores `value` big-endian at `offset`.
    @inline(__always)
    static func store(_ value: UInt32, _ bytes: UnsafeMutableRawBufferPointer, _ offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value)
    }
}
