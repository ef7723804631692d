import SkirmishWire

/// Why the server dropped a packet instead of acting on it; each kind is a label of
/// `skirmish_server_rejected_packets_total{reason}`.
package enum Rejection: Int, CaseIterable, Sendable, Hashable {
    case tooShort, badMagic, unknownType, truncatedPayload, trailingBytes, badString, tooLarge, badValue
    case oversizeFrame
    case wrongDirection
    case unknownPeer
    case outOfState
    case outOfTurn
    case rateLimited
    case badCookie
    case unsupportedVersion
    case serverFull
    case badRequest
    case resumeExpired
    case queueFull
    /// A datagram from a session's address whose trailer did not verify under the session key (spoofed or mangled).
    case badMAC
    /// An unreliable number not newer than the newest seen (replayed or reordered), or a reliable one already
    /// delivered (replayed or resent).
    case stale, duplicate
    /// A number too far ahead of the stream to be honest (beyond the reorder window or the unreliable jump window).
    case farFuture
    /// An Ack for numbers never sent.
    case unsentAck
    /// A Hello or SignInResponse name with control or bidirectional-override characters.
    case badName
    /// A resume for a seat whose owner is live, without proof of the session key.
    case seatInUse
    // Limits per host and prefix (issue 19, item 3).
    case hostRateLimited
    case prefixRateLimited
    case handshakeRateLimited
    case hostSessionsFull
    case prefixSessionsFull
    /// A seat that would open a match for a prefix that holds its share of the matches (issue 24, item 7).
    case prefixMatchesFull
    // Connections (issue 19, items 4 and 5): refused at accept, closed for idleness, refused WebSocket frames.
    case tooManyConnections
    case hostConnectionsFull
    /// A connection from a prefix that holds its cap of connections (issue 24, item 4).
    case prefixConnectionsFull
    case idleTimeout
    case frameTimeout
    case textFrame
    case unmaskedFrame
    case badFrame
    case acceptBackoff
    /// A stream peer that stopped reading: its channel stayed above the write high-water mark too long.
    case slowReader
    /// A TCP or WebSocket connection that took no seat within ``ServerCore/streamHandshakeLimit``.
    case handshakeTimeout
    /// A `Hello` for a game number the server's ``SkirmishGames/GameRegistry`` does not hold.
    case unknownGame

    package init(_ error: DecodeError) {
        switch error {
        case .tooShort: self = .tooShort
        case .badMagic: self = .badMagic
        case .unknownType: self = .unknownType
        case .truncatedPayload: self = .truncatedPayload
        case .trailingBytes: self = .trailingBytes
        case .badString: self = .badString
        case .tooLarge: self = .tooLarge
        case .badValue: self = .badValue
        }
    }

    /// The label value used in metrics and logs.
    package var label: String {
        switch self {
        case .tooShort: "too_short"
        case .badMagic: "bad_magic"
        case .unknownType: "unknown_type"
        case .truncatedPayload: "truncated_payload"
        case .trailingBytes: "trailing_bytes"
        case .badString: "bad_string"
        case .tooLarge: "too_large"
        case .badValue: "bad_value"
        case .oversizeFrame: "oversize_frame"
        case .wrongDirection: "wrong_direction"
        case .unknownPeer: "unknown_peer"
        case .outOfState: "out_of_state"
        case .outOfTurn: "out_of_turn"
        case .rateLimited: "rate_limited"
        case .badCookie: "bad_cookie"
        case .unsupportedVersion: "unsupported_version"
        case .serverFull: "server_full"
        case .badRequest: "bad_request"
        case .resumeExpired: "resume_expired"
        case .queueFull: "queue_full"
        case .badMAC: "bad_mac"
        case .stale: "stale"
        case .duplicate: "duplicate"
        case .farFuture: "far_future"
        case .unsentAck: "unsent_ack"
        case .badName: "bad_name"
        case .seatInUse: "seat_in_use"
        case .hostRateLimited: "host_rate_limited"
        case .prefixRateLimited: "prefix_rate_limited"
        case .handshakeRateLimited: "handshake_rate_limited"
        case .hostSessionsFull: "host_sessions_full"
        case .prefixSessionsFull: "prefix_sessions_full"
        case .prefixMatchesFull: "prefix_matches_full"
        case .tooManyConnections: "too_many_connections"
        case .hostConnectionsFull: "host_connections_full"
        case .prefixConnectionsFull: "prefix_connections_full"
        case .idleTimeout: "idle_timeout"
        case .frameTimeout: "frame_timeout"
        case .textFrame: "text_frame"
        case .unmaskedFrame: "unmasked_frame"
        case .badFrame: "bad_frame"
        case .acceptBackoff: "accept_backoff"
        case .slowReader: "slow_reader"
        case .handshakeTimeout: "handshake_timeout"
        case .unknownGame: "unknown_game"
        }
    }
}
