import SkirmishWire

/// A packet the server wants written, and whether the connection closes after it.
package struct Outgoing: Sendable {
    package var connection: ConnectionID
    package var packet: Packet
    package var closeAfter: Bool
    /// The match the packet belongs to (its player's), or 0: the IO layer reports the bytes it wrote for it with
    /// ``ServerCore/wrote(bytes:match:)``, for the match's bandwidth.
    package var match: UInt32

    package init(_ connection: ConnectionID, _ packet: Packet, closeAfter: Bool = false, match: UInt32 = 0) {
        self.connection = connection
        self.packet = packet
        self.closeAfter = closeAfter
        self.match = match
    }
}
