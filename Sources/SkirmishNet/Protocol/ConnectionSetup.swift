import SkirmishWire

/// What the runtime tells a new connection about where it runs and who it plays: the same for every protocol.
public struct ConnectionSetup: Sendable, Hashable {
    /// How bytes reach ``ClientProtocol/receive(_:now:into:)`` and leave through ``ClientActions``: datagrams over
    /// UDP, one message per call over WebSocket, an unframed byte stream over TCP.
    public var transport: Transport
    /// The bot's number in the run, unique across loops and shards (for names such as `bot-17`).
    public var player: Int
    /// The player's name: the persona's, with the bot's number; a plug-in may build its own from ``player``.
    public var name: String
    /// Seeds what the connection draws at random (connect ids, tokens, nonces): the same seed replays the same run.
    public var seed: UInt64

    /// A setup for `player` on `transport`.
    public init(transport: Transport, player: Int, name: String, seed: UInt64) {
        self.transport = transport
        self.player = player
        self.name = name
        self.seed = seed
    }
}
