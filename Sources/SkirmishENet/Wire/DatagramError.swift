/// Why a datagram, or a command in it, could not be read: the decoder's closed set of failures.
///
/// Each has a metric label (``kind``) from a fixed list, so a hostile server cannot mint new series. libenet stops
/// reading a datagram at the first command it cannot take (protocol.c, `enet_protocol_handle_incoming_commands`), and
/// so does the connection: what came before the failure has been handled, nothing after it is.
enum DatagramError: Error, Sendable, Hashable, CaseIterable {
    /// Shorter than the header its flags (and the checksum setting) call for.
    case truncatedHeader
    /// Larger than `ENET_PROTOCOL_MAXIMUM_MTU`, the most libenet reads into its buffer.
    case oversizedDatagram
    /// Fewer bytes left than the command's fixed part.
    case truncatedCommand
    /// Command number 0 or ≥ `ENET_PROTOCOL_COMMAND_COUNT`.
    case unknownCommand
    /// A send command whose `dataLength` runs past the end of the datagram.
    case truncatedPayload
    /// A fragment whose count, number, offset or length cannot describe a real packet.
    case badFragment

    /// The `kind` label this failure is counted under.
    var kind: String {
        switch self {
        case .truncatedHeader: "truncated_header"
        case .oversizedDatagram: "oversized_datagram"
        case .truncatedCommand: "truncated_command"
        case .unknownCommand: "unknown_command"
        case .truncatedPayload: "truncated_payload"
        case .badFragment: "bad_fragment"
        }
    }
}
