import NIOCore
import SkirmishNet
import SkirmishWire

/// One player the server knows: where it is, its reliability state, and its seat.
package struct Peer: Sendable {
    package let id: UInt32
    package var connection: ConnectionID
    package var endpoint: ReliableEndpoint
    package let game: GameKind
    package var match: UInt32
    package var seat: Int
    /// The secret that takes the seat back after a drop; single-use, replaced by every successful resume.
    package var resumeToken: UInt64
    /// The key of the session's datagram trailers (``SessionKey``); `nil` over TCP and WebSocket.
    package let key: SessionKey?
    package var name: String
    /// When the player dropped; `nil` while attached.
    package var detachedAt: NIODeadline?
    /// Messages for the player while it is away, delivered when it resumes.
    package var backlog: [Message] = []
    /// Whether the player sent anything after its Welcome; one that never did frees its seat when it drops instead
    /// of holding it through the resume window.
    package var played = false
    /// When the player's last match ended (its seat freed); an input in flight then is late, not out of state.
    package var matchEndedAt: NIODeadline?
    /// When the player last acknowledged a Suns capture relayed to it (Suns only): a tally that arrives soon after
    /// may have left before that capture reached the player (ServerCore, unsettled tallies).
    package var captureAcknowledgedAt: NIODeadline?

    package var isAttached: Bool { detachedAt == nil }
}
