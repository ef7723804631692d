import SkirmishNet

/// Where a peer's packets come from and go to.
///
/// UDP peers are known by their address (the cookie proved it is theirs) — a plain value, so that looking one up per
/// datagram neither allocates nor chases a pointer; TCP and WebSocket peers by the stream their connection was given
/// when it was accepted.
package enum ConnectionID: Sendable, Hashable, CustomStringConvertible {
    case datagram(DatagramAddress)
    case stream(UInt64)

    package var isDatagram: Bool {
        if case .datagram = self { return true }
        return false
    }

    package var description: String {
        switch self {
        case .datagram(let address): "udp \(address)"
        case .stream(let id): "stream #\(id)"
        }
    }
}
