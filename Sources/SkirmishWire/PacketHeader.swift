/// The 10-byte header that starts every packet.
///
/// All integers are big-endian. The magic is the four-character code `SNAP`; the packet number is 0 for
/// handshake packets and for every packet on an ordered transport (TCP, WebSocket).
public struct PacketHeader: Sendable, Hashable {
    /// `0x534E4150`, the bytes `S N A P`.
    public static let magic: UInt32 = 0x534E_4150
    /// Bytes taken by the header on the wire.
    public static let size = 10

    /// The sender's packet number; 0 means unnumbered.
    public var number: UInt32
    /// What the payload holds.
    public var type: MessageType

    /// A header with the packet number and the payload's type; the magic is implied.
    public init(number: UInt32, type: MessageType) {
        self.number = number
        self.type = type
    }

    /// Reads the header of a packet without decoding its payload.
    ///
    /// Servers use this to route or refuse a packet (unknown type, wrong direction) before paying for the payload.
    public static func peek(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> PacketHeader {
        var reader = WireReader(bytes)
        return try reader.header()
    }
}
