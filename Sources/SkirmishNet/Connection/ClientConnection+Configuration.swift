import NIOCore
import SkirmishWire

extension ClientConnection {
    /// What a connection asks the server for, and how patient it is.
    package struct Configuration: Sendable, Hashable {
        package var game: GameKind
        /// Seats wanted at the table (2 for Puck and Suns, 2–4 for Snap); the server decides what it accepts.
        package var seats: UInt8
        /// A match to join (0: any).
        package var match: UInt32 = 0
        /// The player's name; cut to ``WireLimits/maxName`` UTF-8 bytes on a character boundary, NUL bytes removed.
        package var name: String
        /// `.datagram` for UDP (the cookie round, Hello resends, numbering and acks), `.stream` for TCP and WebSocket.
        package var mode: ReliableEndpoint.Mode
        /// The delivery rules; its `mode` is overridden by ``mode``.
        package var reliability = ReliableEndpoint.Configuration()
        /// A handshake (the first one or a resume's) not finished in this time fails with
        /// ``ClientConnection/Cause/handshakeTimeout``.
        package var handshakeTimeout: TimeAmount = .seconds(5)
        /// Hello is resent this often over UDP until answered.
        package var helloInterval: TimeAmount = .milliseconds(500)
        /// At most this many Challenges are answered in one handshake; one more closes the connection with
        /// ``ClientConnection/Cause/handshakeLoop``.
        ///
        /// A server that answers every cookie with a fresh Challenge (a cookie key rotating too fast, a clock gone
        /// wrong) would otherwise keep the client in the handshake for ever, each round resetting nothing.
        package var maxChallenges = 8

        package init(game: GameKind, seats: UInt8, name: String, mode: ReliableEndpoint.Mode) {
            self.game = game
            self.seats = seats
            self.name = name
            self.mode = mode
        }
    }
}
