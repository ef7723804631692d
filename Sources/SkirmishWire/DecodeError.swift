/// Why a byte string is not a valid packet. Decoding is total: every input yields a packet or one of these.
public enum DecodeError: Error, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Fewer than the 10 header bytes.
    case tooShort
    /// The first four bytes are not `SNAP`.
    case badMagic
    /// The type code is not in the catalogue.
    case unknownType
    /// The payload ends before its fields do.
    case truncatedPayload
    /// Bytes remain after the last field.
    case trailingBytes
    /// A string is not valid UTF-8.
    case badString
    /// The packet, a string or an element count exceeds its limit.
    case tooLarge
    /// A field holds an impossible value: NaN or infinity, a coordinate out of range, an unknown enum value, a
    /// card above 51, a numbered handshake packet, non-zero padding.
    case badValue

    /// The label value used in metrics (`kind="badMagic"`, `reason="badMagic"`).
    public var label: String {
        switch self {
        case .tooShort: "tooShort"
        case .badMagic: "badMagic"
        case .unknownType: "unknownType"
        case .truncatedPayload: "truncatedPayload"
        case .trailingBytes: "trailingBytes"
        case .badString: "badString"
        case .tooLarge: "tooLarge"
        case .badValue: "badValue"
        }
    }

    /// A sentence for logs and error output saying which rule the bytes broke.
    public var description: String {
        switch self {
        case .tooShort: "packet shorter than the 10-byte header"
        case .badMagic: "packet does not start with the magic 0x534E4150 (SNAP)"
        case .unknownType: "packet type is not in the message catalogue"
        case .truncatedPayload: "payload ends before its last field"
        case .trailingBytes: "bytes left over after the last field"
        case .badString: "string is not valid UTF-8"
        case .tooLarge: "packet, string or element count exceeds its limit"
        case .badValue: "field holds an impossible value (NaN, infinity, out of range or unknown)"
        }
    }
}

/// Why a packet could not be encoded. Encoding refuses exactly what decoding would refuse, so a Skirmish peer never
/// sends what another Skirmish peer would drop.
public enum EncodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The destination buffer is smaller than the packet (`needed` bytes).
    case bufferTooSmall(needed: Int)
    /// A string is longer than its limit.
    case stringTooLong
    /// A string contains a NUL byte, which would end it early on the wire.
    case stringContainsNul
    /// A list holds more elements than its limit.
    case tooManyElements
    /// A field holds a value decoding refuses (NaN, infinity, out of range).
    case badValue

    /// A sentence for logs and error output saying what could not be encoded.
    public var description: String {
        switch self {
        case .bufferTooSmall(let needed): "destination buffer too small: the packet needs \(needed) bytes"
        case .stringTooLong: "string longer than its protocol limit"
        case .stringContainsNul: "string contains a NUL byte"
        case .tooManyElements: "list longer than its protocol limit"
        case .badValue: "field holds a value the protocol refuses (NaN, infinity or out of range)"
        }
    }
}
