import SkirmishWire

/// A packet the server wants written, and whether the connection closes after it.
package struct Outgoing: Sendable {
    package var connection: ConnectionID
    package var packet: Packet
    package var closeAfter: Bool
    /// The match the packet belongs to (its player's), or 0: the IO layer reports the bytes it wrote for it with
    /// ``ServerCore/wrote(bytes:match:)``, for the match's bandwidth.
    package var match: UInt32
    /// The session key whose trailer the datagram carries (``SessionKey``); `nil` for handshake replies to an
    /// address without a session and for every stream packet.
    package var key: SessionKey?

    package init(
        _ connection: ConnectionID, _ packet: Packet, closeAfter: Bool = false, match: UInt32 = 0,
        key: SessionKey? = nil
    ) {
        self.connection = connection
        self.packet = packet
        self.closeAfter = closeAfter
        self.match = match
        self.key = key
    }

    /// Encodes the packet at the start of `buffer`, with the session's trailer when it has a key; returns the bytes
    /// taken, or 0 when it does not fit (the datagram path writes nothing then).
    package func encode(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let length = try? packet.encode(into: buffer) else { return 0 }
        guard let key else { return length }
        return key.seal(buffer, length: length, from: .server) ?? 0
    }
}
