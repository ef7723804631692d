/// Size and count limits of the protocol; decoding refuses anything beyond them.
public enum WireLimits {
    /// Largest UDP datagram a peer sends or accepts.
    public static let maxDatagram = 1_200
    /// Game packets stay under this so headers of lower layers never push a datagram past `maxDatagram`.
    public static let maxGamePacket = 1_000
    /// Largest TCP frame or WebSocket message.
    public static let maxFrame = 65_536
    /// Longest player name, in UTF-8 bytes before the NUL.
    public static let maxName = 32
    /// Longest chat line, in UTF-8 bytes before the NUL.
    public static let maxChat = 256
    /// Longest `Reject` text. Small enough that any `Reject` is shorter than any valid `Hello`, so a reject sent
    /// to an unverified address never amplifies.
    public static let maxRejectText = 60
    /// A `Hello` payload is zero-padded to at least this many bytes (the packet to at least 74).
    public static let helloPayloadSize = 64
    /// Most seats at one table (Snap allows 2–4).
    public static let maxSeats = 4
    /// Most suns in a Suns layout or tally.
    public static let maxSuns = 16
    /// Cards in a deck.
    public static let deckSize = 52
}
