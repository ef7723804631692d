/// Which side of a connection may send a message type.
public enum Direction: Sendable, Hashable {
    case clientToServer
    case serverToClient
    /// Either side (Ping, Chat, the Suns relay messages, …).
    case both

    /// Whether a packet of this direction may come from `sender`.
    ///
    /// A server refuses what `allows(.client)` rejects: a client sending `Welcome` or `TableSnapshot` is hostile.
    public func allows(_ sender: Role) -> Bool {
        switch (self, sender) {
        case (.both, _), (.clientToServer, .client), (.serverToClient, .server): true
        default: false
        }
    }
}

/// The two ends of a Skirmish connection.
public enum Role: Sendable, Hashable {
    case client
    case server
}
