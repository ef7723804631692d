// The "Testing your own server" article's protocol, step 1: the messages and their bytes.

/// One packet of the key-value protocol: a 9-byte header (type, session, request id, big-endian) and a body.
struct KeyValuePacket: Equatable {
    enum Body: Equatable {
        /// Client → server: open a session under `name` (at most 32 bytes).
        case hello(name: String)
        /// Server → client: the session is open; its number is the header's `session`.
        case welcome
        /// Client → server: store `value` under `key`.
        case put(key: UInt16, value: UInt32)
        /// Client → server: read `key`.
        case get(key: UInt16)
        /// Server → client: the answer to the request with the same `id`.
        case value(key: UInt16, value: UInt32)
        /// Either way: the session ends.
        case bye
    }

    var session: UInt32
    var id: UInt32
    var body: Body

    static let headerSize = 9

    /// The type byte of each body, and the packet kind index it is counted under.
    var type: UInt8 {
        switch body {
        case .hello: 1
        case .welcome: 2
        case .put: 3
        case .get: 4
        case .value: 5
        case .bye: 6
        }
    }

    /// Encodes into `buffer`; returns the length (0 when it does not fit).
    func encode(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        var bytes: [UInt8] = [type]
        bytes += Self.bigEndian(session) + Self.bigEndian(id)
        switch body {
        case .hello(let name):
            let utf8 = Array(name.utf8.prefix(32))
            bytes.append(UInt8(utf8.count))
            bytes += utf8
        case .welcome, .bye:
            break
        case .put(let key, let value), .value(let key, let value):
            bytes += Self.bigEndian(key) + Self.bigEndian(value)
        case .get(let key):
            bytes += Self.bigEndian(key)
        }
        guard bytes.count <= buffer.count else { return 0 }
        buffer.copyBytes(from: bytes)
        return bytes.count
    }

    /// Decodes one packet; `nil` for anything malformed (short, unknown type, trailing bytes).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> KeyValuePacket? {
        guard bytes.count >= headerSize else { return nil }
        let session = u32(bytes, 1)
        let id = u32(bytes, 5)
        let rest = bytes.count - headerSize
        let body: Body
        switch bytes[0] {
        case 1:
            guard rest >= 1, rest == 1 + Int(bytes[9]), bytes[9] <= 32 else { return nil }
            body = .hello(name: String(decoding: bytes[10...], as: UTF8.self))
        case 2 where rest == 0: body = .welcome
        case 3 where rest == 6: body = .put(key: u16(bytes, 9), value: u32(bytes, 11))
        case 4 where rest == 2: body = .get(key: u16(bytes, 9))
        case 5 where rest == 6: body = .value(key: u16(bytes, 9), value: u32(bytes, 11))
        case 6 where rest == 0: body = .bye
        default: return nil
        }
        return KeyValuePacket(session: session, id: id, body: body)
    }

    static func bigEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func u16(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
    }

    static func u32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 << 8 | UInt32(bytes[at + $1]) }
    }
}
