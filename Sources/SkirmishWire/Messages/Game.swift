/// `GameReliable` (0x0400) and `GameUnreliable` (0x0401), both directions: the message of a game that is not built in.
///
/// A game added by a program has no message types of its own in this catalogue; its rules and its clients exchange
/// opaque bytes under one of these two types, which the codec, the reliability layer and the server carry like any
/// other message. The game's own format (say, a first byte that says which message it is) is the game's business.
public struct GamePayload: Sendable, Hashable {
    /// Largest payload: a game packet stays under ``WireLimits/maxGamePacket`` with its header and trailer.
    public static let maxSize = 960

    /// Sent as `GameReliable` (resent until acknowledged, delivered in order once) or `GameUnreliable` (newest
    /// wins, for state that the next packet replaces).
    public var reliable: Bool
    /// The game's own encoding, at most ``maxSize`` bytes.
    public var bytes: [UInt8]

    /// A game message of `bytes`, reliable unless told otherwise.
    public init(reliable: Bool = true, bytes: [UInt8]) {
        self.reliable = reliable
        self.bytes = bytes
    }
}

extension GamePayload {
    init(reliable: Bool, reading reader: inout WireReader) throws(DecodeError) {
        guard reader.remaining <= Self.maxSize else { throw .tooLarge }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(reader.remaining)
        while reader.remaining > 0 { bytes.append(try reader.u8()) }
        self.init(reliable: reliable, bytes: bytes)
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        guard bytes.count <= Self.maxSize else { throw .tooManyElements }
        for byte in bytes { try writer.u8(byte) }
    }
}
