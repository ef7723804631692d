/// Reads message fields from borrowed bytes, the way `CUnpacker` (`src/engine/shared/packer.cpp`) does: integers
/// are varints, strings are NUL-terminated, raw runs have a known length.
///
/// After the first failure every read returns zero or `nil` and ``failed`` stays set, so a message handler reads all
/// its fields and checks once. The bytes must outlive the unpacker: it is used inside one `receive` call.
struct Unpacker {
    /// The message's bytes.
    let bytes: UnsafeRawBufferPointer
    /// Where the next field starts.
    private(set) var offset: Int
    /// Whether a read ran past the end or met a malformed varint.
    private(set) var failed = false

    /// An unpacker at the start of `bytes` (or at `offset`).
    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Bytes not read yet.
    var remaining: Int { bytes.count - offset }

    /// The next integer, or 0 after a failure.
    mutating func int() -> Int32 {
        guard !failed, let (value, next) = VarInt.unpack(bytes, at: offset) else {
            failed = true
            return 0
        }
        offset = next
        return value
    }

    /// The next string's bytes without its NUL, or `nil` after a failure (a string must end inside the message).
    mutating func string() -> UnsafeRawBufferPointer? {
        guard !failed else { return nil }
        var end = offset
        while end < bytes.count, bytes[end] != 0 { end += 1 }
        guard end < bytes.count else {
            failed = true
            return nil
        }
        let result = UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
        offset = end + 1
        return result
    }

    /// The next `count` bytes as they are, or `nil` after a failure.
    mutating func raw(_ count: Int) -> UnsafeRawBufferPointer? {
        guard !failed, count >= 0, count <= remaining else {
            failed = true
            return nil
        }
        let result = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        offset += count
        return result
    }

    /// Marks the message as malformed (a field out of range).
    mutating func fail() { failed = true }

    /// The string's bytes as text, control characters replaced by spaces as `str_sanitize_cc` does, at most
    /// `limit` bytes: text from a server is untrusted and ends up in logs.
    static func text(_ bytes: UnsafeRawBufferPointer, limit: Int = 256) -> String {
        let clipped = UnsafeRawBufferPointer(rebasing: bytes[..<min(bytes.count, limit)])
        return String(decoding: clipped.lazy.map { $0 < 32 ? 32 : $0 }, as: UTF8.self)
    }
}
