import SkirmishWire

/// A packet the server wants written, and whether the connection closes after it.
package struct Outgoing: Sendable {
    package var connection: ConnectionID
    package var packet: Packet
    package var closeAfter: Bool

    package init(_ connection: ConnectionID, _ packet: Packet, closeAfter: Bool = false) {
        self.connection = connection
        self.packet = packet
        self.closeAfter = closeAfter
    }
}
