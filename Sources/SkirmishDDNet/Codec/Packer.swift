/// Writes message fields into a caller's buffer, the way `CPacker` (`src/engine/shared/packer.cpp`) does.
///
/// It never grows anything: a message that does not fit sets ``failed`` and the caller drops it, so building a
/// message allocates nothing.
struct Packer {
    /// Where the message goes.
    let buffer: UnsafeMutableRawBufferPointer
    /// Bytes written so far.
    private(set) var count = 0
    /// Whether a field did not fit.
    private(set) var failed = false

    /// A packer writing from the start of `buffer`.
    init(_ buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }

    /// Appends a varint.
    mutating func int(_ value: Int32) {
        guard !failed, let next = VarInt.pack(value, into: buffer, at: count) else {
            failed = true
            return
        }
        count = next
    }

    /// Appends a varint from an `Int`, clamped to `Int32`'s range.
    mutating func int(_ value: Int) {
        int(Int32(clamping: value))
    }

    /// Appends `text` as UTF-8 with its NUL, cut at a character boundary to at most `limit` bytes and at any NUL it
    /// holds (`CPacker::AddString` with a limit: the server checks lengths, so the cut happens here).
    mutating func string(_ text: String, limit: Int) {
        guard !failed else { return }
        var budget = limit
        for scalar in text.unicodeScalars {
            if scalar.value == 0 { break }
            let length = UTF8.width(scalar)
            guard length <= budget else { break }
            guard count + length < buffer.count else {
                failed = true
                return
            }
            for byte in UTF8.encode(scalar)! {
                buffer[count] = byte
                count += 1
            }
            budget -= length
        }
        guard count < buffer.count else {
            failed = true
            return
        }
        buffer[count] = 0
        count += 1
    }

    /// Appends bytes as they are.
    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
        guard !failed, count + bytes.count <= buffer.count else {
            failed = true
            return
        }
        for byte in bytes {
            buffer[count] = byte
            count += 1
        }
    }

    /// Appends bytes as they are.
    mutating func raw(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw($0) }
    }
}
