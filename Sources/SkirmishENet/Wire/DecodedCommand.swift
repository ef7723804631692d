/// One command as the reader found it: header, fields, and where its payload lies in the datagram.
struct DecodedCommand: Sendable, Hashable {
    var header: CommandHeader
    var command: Command
    /// The payload's bytes in the datagram (empty for commands without one); valid while the datagram is.
    var payload: Range<Int>

    /// Bytes the command takes on the wire, payload included.
    var wireSize: Int { header.number.size + payload.count }
}
