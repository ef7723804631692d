/// The transports a client can reach a server by: datagrams (UDP) or one of the two ordered streams (TCP with
/// length-prefixed frames, WebSocket binary messages). The raw value is how scripts and URLs name it (`udp`, `tcp`,
/// `ws`).
public enum Transport: String, Sendable, Hashable, CaseIterable {
    case udp
    case tcp
    case webSocket = "ws"
}
