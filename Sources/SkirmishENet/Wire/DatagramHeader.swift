/// The header every ENet datagram starts with (enet/protocol.h, `ENetProtocolHeader`), then the optional checksum.
///
/// The first 16 bits hold the peer id (low 12 bits), the session id (bits 12–13) and two flags (`ENetProtocolFlag`):
/// bit 15 says a 16-bit sent time follows, bit 14 that the commands are compressed. With checksums on, a 32-bit
/// CRC follows the header (protocol.c, `enet_protocol_send_outgoing_commands`). All big-endian.
struct DatagramHeader: Sendable, Hashable {
    /// The receiver's id for the sending peer, or ``ProtocolLimits/maximumPeerID`` before it has one.
    var peerID: UInt16
    /// The two-bit session id (0 when the peer id is ``ProtocolLimits/maximumPeerID``).
    var sessionID: UInt8
    /// `ENET_PROTOCOL_HEADER_FLAG_COMPRESSED`.
    var compressed: Bool
    /// The low 16 bits of the sender's clock in milliseconds, present when the datagram carries a reliable command.
    var sentTime: UInt16?

    /// `ENET_PROTOCOL_HEADER_FLAG_SENT_TIME`.
    static let sentTimeFlag: UInt16 = 1 << 15
    /// `ENET_PROTOCOL_HEADER_FLAG_COMPRESSED`.
    static let compressedFlag: UInt16 = 1 << 14
    /// `ENET_PROTOCOL_HEADER_SESSION_MASK`.
    static let sessionMask: UInt16 = 3 << 12
    /// `ENET_PROTOCOL_HEADER_SESSION_SHIFT`.
    static let sessionShift: UInt16 = 12

    /// Bytes of the header on the wire, the checksum included when `checksum` is on.
    func size(checksum: Bool) -> Int { (sentTime == nil ? 2 : 4) + (checksum ? 4 : 0) }

    /// The first 16-bit field.
    var peerField: UInt16 {
        (peerID & ProtocolLimits.maximumPeerID) | (UInt16(sessionID & 3) << Self.sessionShift)
            | (compressed ? Self.compressedFlag : 0) | (sentTime == nil ? 0 : Self.sentTimeFlag)
    }
}
