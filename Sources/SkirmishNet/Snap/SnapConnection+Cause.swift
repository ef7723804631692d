import SkirmishWire

extension SnapConnection {
    /// Why a connection ended, in SNAP's own terms; ``closeReason`` is what the runtime counts.
    package enum Cause: Sendable, Hashable, CustomStringConvertible {
        /// The server refused the Hello (or a resume) with a `Reject`, or sent one later (matchmaking timed out).
        case rejected(RejectReason)
        /// The server sent `Disconnect`.
        case remote(DisconnectReason)
        /// The server said it is going away (`ServerQuit`: a restart or a deploy).
        case serverQuit
        /// Nothing arrived for the silence timeout.
        case silence
        /// A reliable message went unacknowledged for the ack timeout, or too many awaited an ack.
        case unacknowledged
        /// No Welcome within ``Configuration/handshakeTimeout``, for a first handshake or a resume.
        case handshakeTimeout
        /// The server answered more than ``Configuration/maxChallenges`` Hellos with a Challenge.
        case handshakeLoop
        /// This side closed it, or dropped its socket without resume.
        case local
        /// The socket failed, or the stream broke its framing.
        case transportError(String)

        package var description: String {
            switch self {
            case .rejected(let reason): "rejected: \(reason)"
            case .remote(let reason): "disconnected by the server: \(reason)"
            case .serverQuit: "the server is shutting down"
            case .silence: "the server went silent"
            case .unacknowledged: "reliable messages went unacknowledged"
            case .handshakeTimeout: "the handshake timed out"
            case .handshakeLoop: "the server answered every Hello with a new Challenge"
            case .local: "closed by this side"
            case .transportError(let text): "transport error: \(text)"
            }
        }

        /// The reason as the runtime counts it: a `kind` from a closed set, whatever code the server sends — a
        /// reason this build does not name is `rejected_unknown` or `disconnected_unknown`, so a hostile server cannot
        /// mint a new series per invented code.
        package var closeReason: CloseReason {
            switch self {
            case .rejected(let reason):
                CloseReason(
                    kind: reason.isKnown ? "rejected_\(reason)" : "rejected_unknown", detail: description,
                    isOutage: false)
            case .remote(let reason):
                CloseReason(
                    kind: reason.isKnown ? "disconnected_\(reason)" : "disconnected_unknown", detail: description,
                    isOutage: reason == .serverShutdown)
            case .serverQuit: CloseReason(kind: "server_quit", detail: description, isOutage: true)
            case .silence: .silence()
            case .unacknowledged: .unacknowledged()
            case .handshakeTimeout: .handshakeTimeout()
            case .handshakeLoop: CloseReason(kind: "handshake_loop", detail: description, isOutage: false)
            case .local: .local
            case .transportError(let text): .transport(text)
            }
        }
    }
}
