/// Which game a client asks for in `Hello`: the game's wire number.
///
/// An open set: the three built-in games have numbers here (``snap``, ``puck``, ``suns``), and a program that adds a
/// game of its own picks an unused number (``GameDescription/kind``) and registers it with the server and the swarm,
/// without a change to this module. Number 0 means no game and never decodes.
public struct GameKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `u8` the game travels under in `Hello`.
    public let rawValue: UInt8

    /// The game under wire number `rawValue` (whether a server plays it is its registry's decision).
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Snap, the turn-based card game (1).
    public static let snap = GameKind(rawValue: 1)
    /// Puck, real-time air hockey (2).
    public static let puck = GameKind(rawValue: 2)
    /// Suns, the relayed race (3).
    public static let suns = GameKind(rawValue: 3)

    /// The built-in games, in wire-number order.
    public static let builtIn: [GameKind] = [.snap, .puck, .suns]

    /// The built-in games' metric label (`game="puck"`); any other number reads `game-<n>` here, and its registered
    /// ``GameDescription/name`` wherever a registry is at hand (metrics, scripts, summaries).
    public var description: String {
        switch rawValue {
        case 1: "snap"
        case 2: "puck"
        case 3: "suns"
        default: "game-\(rawValue)"
        }
    }
}

/// The 16-byte stateless cookie of the handshake.
public struct Cookie: Sendable, Hashable {
    /// The cookie's first eight bytes on the wire, as a big-endian integer.
    public var high: UInt64
    /// The cookie's last eight bytes on the wire, as a big-endian integer.
    public var low: UInt64

    /// A cookie from its two halves, as read from a `Challenge`; the bytes are opaque to the client.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The cookie of a first `Hello`.
    public static let zero = Cookie(high: 0, low: 0)
}

/// `Hello` (0x0001, C→S, handshake): asks to join a match, first without and then with the server's cookie.
///
/// The payload is zero-padded to at least 64 bytes so that no answer to an unverified address is larger than it.
public struct Hello: Sendable, Hashable {
    /// The protocol version this implementation speaks.
    public static let currentVersion: UInt16 = 1

    /// The protocol version the client speaks (``currentVersion``); others get `Reject(unsupportedVersion)`.
    public var version: UInt16
    /// The game to play; it also picks the match the server seats the client in.
    public var game: GameKind
    /// Seats wanted at the table (2 for Puck and Suns, 2–4 for Snap); the server decides what it accepts.
    public var seats: UInt8
    /// A match to join, or 0 for any.
    public var match: UInt32
    /// Zero on the first try, then the cookie from `Challenge`.
    public var cookie: Cookie
    /// 0 for a new player, or the token from `Welcome` to take back a dropped seat.
    public var resumeToken: UInt64
    /// The player's display name: at most 32 UTF-8 bytes, without control or bidirectional characters (``PlayerName``).
    public var name: String

    /// A `Hello` for the current protocol version; by default for any match, with no cookie and no resume token.
    public init(
        version: UInt16 = Hello.currentVersion, game: GameKind, seats: UInt8, match: UInt32 = 0,
        cookie: Cookie = .zero, resumeToken: UInt64 = 0, name: String
    ) {
        self.version = version
        self.game = game
        self.seats = seats
        self.match = match
        self.cookie = cookie
        self.resumeToken = resumeToken
        self.name = name
    }
}

extension Hello: Payload {
    /// Bytes before the name: version, game, seats, match, cookie, resume token.
    static let fixedSize = 2 + 1 + 1 + 4 + 16 + 8

    init(reading reader: inout WireReader) throws(DecodeError) {
        let start = reader.offset
        version = try reader.u16()
        let game = try reader.u8()
        // Any other number decodes: whether the server plays it is its registry's decision (`unknown_game`).
        guard game != 0 else { throw .badValue }
        self.game = GameKind(rawValue: game)
        seats = try reader.u8()
        match = try reader.u32()
        cookie = Cookie(high: try reader.u64(), low: try reader.u64())
        resumeToken = try reader.u64()
        name = try reader.string(limit: WireLimits.maxName)
        let padding = WireLimits.helloPayloadSize - (reader.offset - start)
        if padding > 0 {
            guard reader.remaining >= padding else { throw .truncatedPayload }
            for _ in 0..<padding {
                guard try reader.u8() == 0 else { throw .badValue }
            }
        }
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        let start = writer.offset
        try writer.u16(version)
        try writer.u8(game.rawValue)
        try writer.u8(seats)
        try writer.u32(match)
        try writer.u64(cookie.high)
        try writer.u64(cookie.low)
        try writer.u64(resumeToken)
        try writer.string(name, limit: WireLimits.maxName)
        try writer.zeros(WireLimits.helloPayloadSize - (writer.offset - start))
    }
}

/// `Challenge` (0x0002, S→C, handshake): the cookie to echo in the next `Hello`.
public struct Challenge: Sendable, Hashable {
    /// The server's opaque cookie, keyed to the client's address and the time; send it back unchanged in `Hello`.
    public var cookie: Cookie

    /// A challenge carrying `cookie`.
    public init(cookie: Cookie) { self.cookie = cookie }
}

extension Challenge: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        cookie = Cookie(high: try reader.u64(), low: try reader.u64())
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u64(cookie.high)
        try writer.u64(cookie.low)
    }
}

/// `Welcome` (0x0003, S→C, reliable): the client has a seat.
public struct Welcome: Sendable, Hashable {
    /// The peer id the server gave this client, unique within the server process; other messages name players by it.
    public var peer: UInt32
    /// The match the client was seated in; send it in another client's `Hello` to join the same match.
    public var match: UInt32
    /// The client's seat at the table, 0-based (Puck and Suns: 0 or 1; Snap: 0–3).
    public var seat: UInt8
    /// Simulation ticks per second of the match (60 for Puck).
    public var tickRate: UInt16
    /// Present this in a later `Hello` to take the seat back after a drop (within 15 s). Single-use: the Welcome
    /// that answers a resume carries a new one.
    public var resumeToken: UInt64
    /// The key that authenticates every later datagram of the session (``SessionKey``); zero over TCP and WebSocket.
    public var sessionKey: SessionKey

    /// A `Welcome`; the session key is zero (no trailer) unless the session is over UDP.
    public init(
        peer: UInt32, match: UInt32, seat: UInt8, tickRate: UInt16, resumeToken: UInt64,
        sessionKey: SessionKey = .zero
    ) {
        self.peer = peer
        self.match = match
        self.seat = seat
        self.tickRate = tickRate
        self.resumeToken = resumeToken
        self.sessionKey = sessionKey
    }
}

extension Welcome: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        peer = try reader.u32()
        match = try reader.u32()
        seat = try reader.u8()
        tickRate = try reader.u16()
        resumeToken = try reader.u64()
        sessionKey = SessionKey(key0: try reader.u64(), key1: try reader.u64())
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(peer)
        try writer.u32(match)
        try writer.u8(seat)
        try writer.u16(tickRate)
        try writer.u64(resumeToken)
        try writer.u64(sessionKey.key0)
        try writer.u64(sessionKey.key1)
    }
}

/// Why a server refused a `Hello`. An open set: a peer may send codes this build does not name.
public struct RejectReason: RawRepresentable, Error, Sendable, Hashable, CustomStringConvertible {
    /// The code on the wire (u16); codes this build does not name stay as they came.
    public var rawValue: UInt16
    /// A reason from its wire code, named or not.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Code 1: the `Hello`'s version is not one this server speaks.
    public static let unsupportedVersion = RejectReason(rawValue: 1)
    /// Code 2: the cookie is stale or was not made for this address; start the handshake again.
    public static let badCookie = RejectReason(rawValue: 2)
    /// Code 3: the server, or the sender's host or prefix, holds as many sessions as it allows.
    public static let serverFull = RejectReason(rawValue: 3)
    /// Code 4: the `Hello` cannot be served as asked (for example a seat count the game does not allow).
    public static let badRequest = RejectReason(rawValue: 4)
    /// Code 5: the match named in the `Hello` does not exist or is no longer forming.
    public static let noSuchMatch = RejectReason(rawValue: 5)
    /// Code 6: the resume token is unknown, already used, more than 15 s old, or for another game or transport.
    public static let resumeExpired = RejectReason(rawValue: 6)
    /// Code 7: too many handshakes from this host or prefix in the last second; try again a second later.
    public static let rateLimited = RejectReason(rawValue: 7)
    /// Code 8: the server is draining and seats no one.
    public static let shuttingDown = RejectReason(rawValue: 8)
    /// Code 9: no other player joined the forming match within the server's matchmaking timeout (30 s by default).
    public static let matchmakingTimeout = RejectReason(rawValue: 9)
    /// The name holds a control, format or bidirectional-override character (see ``PlayerName``).
    public static let badName = RejectReason(rawValue: 10)
    /// A resume for a seat whose owner is still connected, without proof of the session key.
    public static let seatInUse = RejectReason(rawValue: 11)

    /// Whether this build names the code; a peer may send others, which a receiver must not turn into new labels.
    public var isKnown: Bool { (1...11).contains(rawValue) }

    /// The reason's Swift name (`serverFull`), or `reason<code>` for a code this build does not name.
    public var description: String {
        switch self {
        case .unsupportedVersion: "unsupportedVersion"
        case .badCookie: "badCookie"
        case .serverFull: "serverFull"
        case .badRequest: "badRequest"
        case .noSuchMatch: "noSuchMatch"
        case .resumeExpired: "resumeExpired"
        case .rateLimited: "rateLimited"
        case .shuttingDown: "shuttingDown"
        case .matchmakingTimeout: "matchmakingTimeout"
        case .badName: "badName"
        case .seatInUse: "seatInUse"
        default: "reason\(rawValue)"
        }
    }
}

/// `Reject` (0x0004, S→C, handshake): the server will not seat this client, and says why.
public struct Reject: Sendable, Hashable {
    /// Why the client is refused; see ``RejectReason``.
    public var reason: RejectReason
    /// At most 60 bytes, so a `Reject` is always smaller than the `Hello` it answers.
    public var text: String

    /// A `Reject` with a reason and a human-readable text (at most 60 bytes).
    public init(reason: RejectReason, text: String) {
        self.reason = reason
        self.text = text
    }
}

extension Reject: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        reason = RejectReason(rawValue: try reader.u16())
        text = try reader.string(limit: WireLimits.maxRejectText)
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u16(reason.rawValue)
        try writer.string(text, limit: WireLimits.maxRejectText)
    }
}

/// `Ack` (0x0005, both, handshake): acknowledges reliable packets.
///
/// `cumulative` is the highest number below which everything has arrived; bit *i* of `bitfield` set means packet
/// `cumulative + 1 + i` has arrived too.
public struct Ack: Sendable, Hashable {
    /// The highest reliable number up to which every packet has arrived.
    public var cumulative: UInt32
    /// Bit *i* set: packet `cumulative + 1 + i` has arrived too.
    public var bitfield: UInt32

    /// An acknowledgement of everything up to `cumulative` and of the later packets whose bits are set.
    public init(cumulative: UInt32, bitfield: UInt32) {
        self.cumulative = cumulative
        self.bitfield = bitfield
    }
}

extension Ack: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        cumulative = try reader.u32()
        bitfield = try reader.u32()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(cumulative)
        try writer.u32(bitfield)
    }
}

/// The payload of `Ping` (0x0006) and `Pong` (0x0007), both directions, unreliable. A pong echoes its ping.
public struct Ping: Sendable, Hashable {
    /// An identifier the sender chooses (a bot's number; 0 for a keepalive); the pong echoes it.
    public var player: UInt32
    /// The sender's running count of pings, so a pong can be matched to its ping.
    public var count: UInt32
    /// The sender's clock when sent, in seconds.
    public var sendTime: Double

    /// A ping (or the pong echoing it) with the sender's id, count and clock.
    public init(player: UInt32, count: UInt32, sendTime: Double) {
        self.player = player
        self.count = count
        self.sendTime = sendTime
    }
}

extension Ping: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        player = try reader.u32()
        count = try reader.u32()
        sendTime = try reader.f64()
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u32(player)
        try writer.u32(count)
        try writer.f64(sendTime)
    }
}

/// Why a connection ends. An open set, like `RejectReason`.
public struct DisconnectReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code on the wire (u16); codes this build does not name stay as they came.
    public var rawValue: UInt16
    /// A reason from its wire code, named or not.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Code 1: the player left on purpose.
    public static let quit = DisconnectReason(rawValue: 1)
    /// Code 2: nothing was heard from the peer for the session timeout.
    public static let timeout = DisconnectReason(rawValue: 2)
    /// Code 3: reliable packets went unacknowledged for 10 s.
    public static let ackTimeout = DisconnectReason(rawValue: 3)
    /// Code 4: the server removed the player.
    public static let kicked = DisconnectReason(rawValue: 4)
    /// Code 5: the server is shutting down.
    public static let serverShutdown = DisconnectReason(rawValue: 5)
    /// Code 6: the peer sent something the protocol does not allow.
    public static let protocolError = DisconnectReason(rawValue: 6)
    /// Code 7: the match ended; the connection is no longer needed.
    public static let matchOver = DisconnectReason(rawValue: 7)
    /// The seat was taken over by a resume that proved the session key (the owner moved to a new address).
    public static let resumedElsewhere = DisconnectReason(rawValue: 8)

    /// Whether this build names the code; a peer may send others, which a receiver must not turn into new labels.
    public var isKnown: Bool { (1...8).contains(rawValue) }

    /// The reason's Swift name (`quit`), or `reason<code>` for a code this build does not name.
    public var description: String {
        switch self {
        case .quit: "quit"
        case .timeout: "timeout"
        case .ackTimeout: "ackTimeout"
        case .kicked: "kicked"
        case .serverShutdown: "serverShutdown"
        case .protocolError: "protocolError"
        case .matchOver: "matchOver"
        case .resumedElsewhere: "resumedElsewhere"
        default: "reason\(rawValue)"
        }
    }
}

/// `Disconnect` (0x0008, both, handshake).
public struct Disconnect: Sendable, Hashable {
    /// Why the connection ends; see ``DisconnectReason``.
    public var reason: DisconnectReason

    /// A disconnect for `reason`.
    public init(reason: DisconnectReason) { self.reason = reason }
}

extension Disconnect: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        reason = DisconnectReason(rawValue: try reader.u16())
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.u16(reason.rawValue)
    }
}

/// `Chat` (0x0009, both, reliable): a line of text the server relays to the rest of the match.
public struct Chat: Sendable, Hashable {
    /// At most 256 UTF-8 bytes.
    public var text: String

    /// A chat line; longer than 256 bytes is refused when encoding.
    public init(text: String) { self.text = text }
}

extension Chat: Payload {
    init(reading reader: inout WireReader) throws(DecodeError) {
        text = try reader.string(limit: WireLimits.maxChat)
    }

    func write(to writer: inout WireWriter) throws(EncodeError) {
        try writer.string(text, limit: WireLimits.maxChat)
    }
}
