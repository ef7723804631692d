import SkirmishWire

extension SnapConnection {
    /// What a SNAP connection asks the server for, and how patient it is: a script's `protocol: snap` block and a
    /// persona's `game:` and `seats:`.
    public struct Configuration: Sendable, Hashable {
        /// The game to join.
        public var game: GameKind
        /// Seats wanted at the table (2 for Puck and Suns, 2–4 for Snap); the server decides what it accepts.
        public var seats: UInt8
        /// A match to join (0: any).
        public var match: UInt32 = 0
        /// The player's name; `nil` takes the runtime's (``ConnectionSetup/name``). Cut to ``WireLimits/maxName``
        /// UTF-8 bytes on a character boundary, NUL bytes removed.
        public var name: String?
        /// The delivery rules (resend timing, reorder and pending limits, silence and ack timeouts); its `mode`
        /// follows the transport.
        public var reliability = ReliableEndpoint.Configuration()
        /// A handshake (the first one or a resume's) not finished in this time closes the connection
        /// (`handshake_timeout`).
        public var handshakeTimeout: Duration = .seconds(5)
        /// Hello is resent this often over UDP until answered.
        public var helloInterval: Duration = .milliseconds(500)
        /// At most this many Challenges are answered in one handshake; one more closes the connection
        /// (`handshake_loop`).
        ///
        /// A server that answers every cookie with a fresh Challenge (a cookie key rotating too fast, a clock gone
        /// wrong) would otherwise keep the client in the handshake for ever, each round resetting nothing.
        public var maxChallenges = 8
        /// How often a seated connection sends a `Ping` to measure the round trip (`nil`: never; the reliable
        /// layer's keep-alives still run when the line is idle).
        public var pingInterval: Duration? = .seconds(1)

        /// A configuration for `seats` seats of `game`.
        public init(game: GameKind, seats: UInt8 = 2) {
            self.game = game
            self.seats = seats
        }
    }
}
