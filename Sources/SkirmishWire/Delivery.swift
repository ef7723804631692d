/// How a packet type is delivered over UDP (DESIGN §2). TCP and WebSocket deliver every type reliably in order.
public enum Delivery: Sendable, Hashable, CaseIterable {
    /// Handshake and control (Hello, Challenge, Reject, Ack, Disconnect): packet number 0, never acked.
    case handshake
    /// Numbered 1, 2, 3… per direction, acked, resent until acked, delivered in order exactly once.
    case reliable
    /// Numbered increasingly; the receiver drops anything not newer than the newest it has seen.
    case unreliable

    /// The label value used in metrics (`delivery="reliable"`).
    public var label: String {
        switch self {
        case .handshake: "handshake"
        case .reliable: "reliable"
        case .unreliable: "unreliable"
        }
    }
}
