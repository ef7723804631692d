/// The three bytes that start every 0.6 datagram (`src/engine/shared/network.h`, the "packet header" comment):
/// six flag bits and the top two bits of the acknowledgement, the low eight bits of it, and the chunk count.
struct PacketHeader: Hashable {
    /// The header's size (`NET_PACKETHEADERSIZE`).
    static let size = 3
    /// The largest datagram either side sends or accepts (`NET_MAX_PACKETSIZE`).
    static let maxPacketSize = 1400
    /// The most chunk bytes one packet carries (`NET_MAX_PAYLOAD`).
    static let maxPayload = maxPacketSize - 6

    /// The packet flags (`NET_PACKETFLAG_*`).
    struct Flags: OptionSet, Hashable {
        var rawValue: UInt8
        /// Set by 0.7 peers only (`NET_PACKETFLAG_UNUSED`); a 0.6 server never sends it.
        static let sixup = Flags(rawValue: 1 << 0)
        /// `NET_PACKETFLAG_TOKEN`: unused by DDNet's 0.6 token scheme, which appends the token instead.
        static let token = Flags(rawValue: 1 << 1)
        /// The packet is one control message (`NET_PACKETFLAG_CONTROL`).
        static let control = Flags(rawValue: 1 << 2)
        /// A connectionless packet (`NET_PACKETFLAG_CONNLESS`): server info, not part of a connection.
        static let connectionless = Flags(rawValue: 1 << 3)
        /// The sender missed vital chunks and asks for all unacknowledged ones again (`NET_PACKETFLAG_RESEND`).
        static let resend = Flags(rawValue: 1 << 4)
        /// The payload is Huffman-compressed (`NET_PACKETFLAG_COMPRESSION`).
        static let compression = Flags(rawValue: 1 << 5)
    }

    var flags: Flags
    /// The sender's newest in-order vital sequence number (10 bits).
    var ack: Int
    /// How many chunks the payload holds (0 for a control packet).
    var chunkCount: Int

    /// Reads the header of `datagram`; `nil` when it is too short or too long.
    init?(_ datagram: UnsafeRawBufferPointer) {
        guard datagram.count >= Self.size, datagram.count <= Self.maxPacketSize else { return nil }
        flags = Flags(rawValue: datagram[0] >> 2)
        ack = Int(datagram[0] & 0x3) << 8 | Int(datagram[1])
        chunkCount = Int(datagram[2])
    }

    /// A header with these fields.
    init(flags: Flags, ack: Int, chunkCount: Int) {
        self.flags = flags
        self.ack = ack
        self.chunkCount = chunkCount
    }

    /// Writes the three bytes at the start of `buffer` (which holds at least ``size``).
    func write(into buffer: UnsafeMutableRawBufferPointer) {
        buffer[0] = (flags.rawValue << 2) & 0xFC | UInt8((ack >> 8) & 0x3)
        buffer[1] = UInt8(ack & 0xFF)
        buffer[2] = UInt8(truncatingIfNeeded: chunkCount)
    }
}
