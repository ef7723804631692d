import SkirmishWire

/// The bytes of the `payload` behaviour's messages, as a script lays them out: fixed bytes, a sequence number,
/// random fill, zeros and the send time, in order.
///
/// Every field has a fixed size, so the sequence number sits at the same offset in every message: that is where a
/// reply is read for the number an echo server sent back. Writing appends to a buffer the agent reuses, so a message
/// costs no allocation once the buffer has its size.
struct PayloadTemplate: Sendable, Hashable {
    /// How an integer is laid out: its width and byte order (big-endian unless the name ends in `le`).
    enum Integer: String, Sendable, Hashable, CaseIterable {
        case u8, u16, u32, u64, u16le, u32le, u64le

        /// Its width in bytes.
        var size: Int {
            switch self {
            case .u8: 1
            case .u16, .u16le: 2
            case .u32, .u32le: 4
            case .u64, .u64le: 8
            }
        }

        /// Whether its least significant byte comes first.
        var littleEndian: Bool { self == .u16le || self == .u32le || self == .u64le }

        /// The values it can hold, as a mask.
        var mask: UInt64 { size == 8 ? .max : (1 << UInt64(8 * size)) - 1 }
    }

    /// How the send time is written: seconds as an IEEE-754 double, or nanoseconds as an unsigned integer, on the
    /// bot's monotonic clock (only the bot can read it back: what an echo needs).
    enum Time: String, Sendable, Hashable, CaseIterable {
        case f64, f64le, u64, u64le

        var littleEndian: Bool { self == .f64le || self == .u64le }
    }

    /// One part of a message.
    enum Field: Sendable, Hashable {
        /// These bytes (`{bytes: "0a0b"}`, `{text: "hello"}`).
        case bytes([UInt8])
        /// The message's number, counting from 0 for each connection (`{sequence: u32}`).
        case sequence(Integer)
        /// Bytes from the bot's seeded generator (`{random: 8}`).
        case random(Int)
        /// Zero bytes (`{zeros: 4000}`): padding, to size a message.
        case zeros(Int)
        /// The send time (`{time: f64}`).
        case time(Time)

        var size: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .sequence(let format): format.size
            case .random(let count), .zeros(let count): count
            case .time: 8
            }
        }
    }

    /// The fields in order.
    let fields: [Field]
    /// A message's size in bytes.
    let size: Int
    /// Where the sequence number is and how it is written, when the template has one.
    let sequence: (offset: Int, format: Integer)?

    /// A template of `fields`; at most one of them may be a sequence number.
    init(_ fields: [Field]) {
        self.fields = fields
        var offset = 0
        var sequence: (offset: Int, format: Integer)?
        for field in fields {
            if case .sequence(let format) = field, sequence == nil { sequence = (offset, format) }
            offset += field.size
        }
        size = offset
        self.sequence = sequence
    }

    static func == (lhs: PayloadTemplate, rhs: PayloadTemplate) -> Bool { lhs.fields == rhs.fields }

    func hash(into hasher: inout Hasher) { hasher.combine(fields) }

    /// Writes one message into `buffer` (emptied first, its capacity kept).
    func write(sequence number: UInt64, now: Instant, random: inout SeededRandom, into buffer: inout [UInt8]) {
        buffer.removeAll(keepingCapacity: true)
        for field in fields {
            switch field {
            case .bytes(let bytes):
                buffer.append(contentsOf: bytes)
            case .sequence(let format):
                Self.append(number, size: format.size, littleEndian: format.littleEndian, to: &buffer)
            case .random(let count):
                var left = count
                while left > 0 {
                    let word = random.next()
                    let take = min(left, 8)
                    Self.append(word, size: take, littleEndian: true, to: &buffer)
                    left -= take
                }
            case .zeros(let count):
                buffer.append(contentsOf: repeatElement(0, count: count))
            case .time(let format):
                let bits = format == .f64 || format == .f64le ? now.seconds.bitPattern : now.nanoseconds
                Self.append(bits, size: 8, littleEndian: format.littleEndian, to: &buffer)
            }
        }
    }

    /// The sequence number in `bytes`, read where the template writes it; `nil` when the template has none or the
    /// bytes are too short to hold it.
    func sequenceNumber(in bytes: [UInt8]) -> UInt64? {
        guard let (offset, format) = sequence, bytes.count >= offset + format.size else { return nil }
        var value: UInt64 = 0
        for index in 0..<format.size {
            let byte = UInt64(bytes[offset + (format.littleEndian ? format.size - 1 - index : index)])
            value = value << 8 | byte
        }
        return value
    }

    /// Appends the low `size` bytes of `value`.
    private static func append(_ value: UInt64, size: Int, littleEndian: Bool, to buffer: inout [UInt8]) {
        for index in 0..<size {
            let shift = UInt64(8 * (littleEndian ? index : size - 1 - index))
            buffer.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}
