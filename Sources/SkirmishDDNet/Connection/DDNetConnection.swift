import SkirmishNet
import SkirmishWire

/// One bot's connection to a DDNet server (the Teeworlds 0.6 protocol with DDNet's extensions), as a value-type
/// state machine: datagrams and time in, datagrams, agent messages and metric events out.
///
/// It speaks what Debian's `DDNet-Server` 16.4 expects of a client (`src/engine/client/client.cpp`), and nothing
/// more: the connect / connect-accept / accept handshake with DDNet's security token, then the join —
/// `clientver` and `INFO` (net version, password); on `MAP_CHANGE`, `READY` at once (a bot needs no map file, so
/// nothing is downloaded); on `CON_READY`, the game's `STARTINFO` (name, clan, country, skin, colours); on
/// `READYTOENTER`, `ENTERGAME` — after which snapshots flow. Under that runs the 0.6 chunk layer: vital chunks with
/// 10-bit sequence numbers, acknowledged by every packet's header and resent after a second or when the server asks,
/// Huffman compression, keep-alives.
///
/// Snapshots are reassembled from their parts, applied as deltas to the snapshot the server used as base, and
/// checked against the server's checksum: a mismatch is a desync episode (``ClientMetric/desync(_:)``), after which
/// the bot acknowledges tick -1 to get a full snapshot, as the reference client does. Each verified snapshot becomes
/// a ``World``. Once in game the connection sends the agent's held ``Input`` every server tick (50 Hz) with the
/// acknowledged snapshot tick, pings once a second for the round trip, and passes the server's input timing on.
///
/// Bad input from the server is counted by kind (``ClientMetric/error(kind:)``) and dropped; every buffer is bounded,
/// and once in game receiving, decoding and sending allocate nothing per tick (buffers and snapshot storage are
/// reused; see ``World`` for the one copy the runtime may force).
public struct DDNetConnection: ClientProtocol {
    /// What the agent learns on entering the game.
    public typealias Established = Session

    /// Where the connection is in its life.
    enum Phase: Hashable {
        /// Created; ``start(now:into:)`` sends the first connect.
        case idle
        /// Connect sent, no connect-accept yet.
        case connecting
        /// Accepted; `INFO` sent, waiting for the map.
        case loading
        /// `READY` sent, waiting for `CON_READY`.
        case ready
        /// `STARTINFO` sent, waiting for `READYTOENTER`.
        case starting
        /// `ENTERGAME` sent, waiting for the first verified snapshot.
        case entering
        /// In the game.
        case inGame
        /// Over; nothing more is sent or reported.
        case closed
    }

    /// The security token: unknown before the connect-accept, then the server's, or none for a server without it.
    enum Token: Hashable {
        case unknown
        case known(UInt32)
        case unsupported

        /// What to append to an outgoing packet.
        var trailer: UInt32? {
            switch self {
            case .unknown: PacketCodec.unknownToken
            case .known(let token): token
            case .unsupported: nil
            }
        }

        /// What incoming packets must end with.
        var expected: UInt32? {
            if case .known(let token) = self { return token }
            return nil
        }
    }

    /// Snapshots kept as delta bases: the server deltas against the newest tick this bot acknowledged in an input it
    /// received, which lags the newest verified one by a few ticks when inputs are lost.
    static let keptSnapshots = 8
    /// Vital chunks not acknowledged within this long are sent again (`CNetConnection::Update`).
    static let resendInterval: Duration = .seconds(1)
    /// Connects are repeated this often until accepted (`CNetConnection::Update`, 500 ms).
    static let connectInterval: Duration = .milliseconds(500)
    /// A keep-alive goes out when nothing else did for this long (`CNetConnection::Update`).
    static let keepAliveInterval: Duration = .seconds(1)
    /// Received vital chunks are acknowledged within this long even when there is nothing else to send.
    static let ackDelay: Duration = .milliseconds(50)

    let configuration: Configuration
    /// The name the bot joins with.
    public let name: String
    /// The runtime's seed for this bot: the client-version message's connection id comes from it.
    let seed: UInt64
    var phase = Phase.idle
    /// The newest verified snapshot, as a world; empty until the first.
    public internal(set) var world = World()

    // Chunk layer (`CNetConnection`).
    var token = Token.unknown
    /// The sequence number of the last vital chunk sent.
    var sequence = 0
    /// The sequence number of the last vital chunk received in order.
    var ack = 0
    /// The newest acknowledgement the server sent.
    var peerAck = 0
    var resendQueue = ResendQueue()
    /// Set when a vital chunk arrived out of order: the next packet asks the server to resend.
    var resendRequested = false
    /// Chunks waiting to be sent in one packet, with room for the token.
    var outbox = [UInt8](repeating: 0, count: PacketHeader.maxPayload)
    var outboxBytes = 0
    var outboxKinds: [(kind: Kind, bytes: Int)] = []
    /// Where a received datagram is decompressed.
    var inbox = [UInt8](repeating: 0, count: PacketHeader.maxPacketSize)

    // Timers.
    var startedAt = Instant.zero
    var lastReceived = Instant.zero
    var lastSent = Instant.zero
    var nextConnect = Instant.distantFuture
    var ackDue = Instant.distantFuture
    var nextInput = Instant.distantFuture
    var nextPing = Instant.distantFuture
    var pingSentAt: Instant?
    var leastRoundTrip: Duration?

    // Join.
    var map = ""
    var mapCRC = 0
    var mapSize = 0

    // Snapshots.
    var snapshots: [Snapshot]
    var decoded = Snapshot(reservingItems: 256, words: 4_096)
    /// The most items and words of item data a snapshot of this connection has had, for ``Snapshot/reserve(items:words:)``.
    var largestSnapshot = (items: 0, words: 0)
    var delta = SnapshotDelta()
    var assembler = SnapshotAssembler()
    var words = [Int32](repeating: 0, count: Snapshot.maxWords)
    /// The newest verified snapshot's tick, sent back in inputs; -1 asks for a full snapshot.
    var ackTick: Int32 = -1
    var lastSnapshotArrival: Instant?
    /// Whether a desync episode is open (no verified snapshot since the mismatch).
    var desyncOpen = false
    var clock = ServerClock()

    // Input.
    var input = Input.neutral
    var fireCount: Int32 = 0
    /// Ticks ahead of the estimated server tick that inputs are meant for; tuned by the server's input timing.
    var leadTicks: Int32 = 2
    var lastPredictedTick: Int32 = 0

    /// A connection for bot `setup.player`, named from ``Configuration/namePattern``.
    public init(configuration: Configuration, setup: ConnectionSetup) {
        self.configuration = configuration
        name = configuration.name(player: setup.player, fallback: setup.name)
        seed = setup.seed
        snapshots = (0..<Self.keptSnapshots).map { _ in Snapshot(reservingItems: 256, words: 4_096) }
        outboxKinds.reserveCapacity(64)
        world.characters.reserveCapacity(64)
    }

    /// When ``tick(now:into:)`` next has work.
    public var nextDeadline: Instant {
        switch phase {
        case .idle, .closed:
            return .distantFuture
        case .connecting:
            return min(nextConnect, startedAt + configuration.handshakeTimeout)
        case .loading, .ready, .starting, .entering, .inGame:
            var deadline = min(lastSent + Self.keepAliveInterval, lastReceived + configuration.silenceTimeout)
            deadline = min(deadline, ackDue)
            if let oldest = resendQueue.oldest {
                deadline = min(deadline, oldest.lastSent + Self.resendInterval)
                deadline = min(deadline, oldest.firstSent + configuration.silenceTimeout)
            }
            if phase == .inGame {
                deadline = min(deadline, min(nextInput, nextPing))
            } else {
                deadline = min(deadline, startedAt + configuration.handshakeTimeout)
            }
            return deadline
        }
    }

    /// Sends the first connect.
    public mutating func start(now: Instant, into actions: inout ClientActions<Self>) {
        guard phase == .idle else { return }
        phase = .connecting
        startedAt = now
        lastReceived = now
        sendConnect(now: now, into: &actions)
    }

    /// Sends or holds what the agent produced: an input is held and sent every tick, a chat line goes out vital.
    public mutating func send(_ message: Message, now: Instant, into actions: inout ClientActions<Self>) {
        guard phase != .idle, phase != .closed else { return }
        switch message {
        case .input(let new):
            if new.fire != input.fire { fireCount &+= 1 }
            input = new
        case .say(let text):
            queue(.say, vital: true, now: now, into: &actions) { packer in
                packer.int(Wire.Game.say << 1)
                packer.int(0)
                packer.string(text, limit: 255)
            }
            flush(now: now, into: &actions)
        case .chat, .world, .inputTiming:
            break
        }
    }

    /// Runs what is due: connects, resends, acknowledgements, keep-alives, inputs, pings and timeouts.
    public mutating func tick(now: Instant, into actions: inout ClientActions<Self>) {
        switch phase {
        case .idle, .closed:
            return
        case .connecting:
            if now >= startedAt + configuration.handshakeTimeout {
                end(.handshakeTimeout(), into: &actions)
            } else if now >= nextConnect {
                sendConnect(now: now, into: &actions)
            }
            return
        case .loading, .ready, .starting, .entering, .inGame:
            break
        }
        if phase != .inGame && now >= startedAt + configuration.handshakeTimeout {
            end(.handshakeTimeout("the server did not let the bot into the game in time"), into: &actions)
            return
        }
        if now >= lastReceived + configuration.silenceTimeout {
            end(.silence(), into: &actions)
            return
        }
        if let oldest = resendQueue.oldest {
            if now >= oldest.firstSent + configuration.silenceTimeout {
                end(.unacknowledged(), into: &actions)
                return
            }
            if now >= oldest.lastSent + Self.resendInterval { resend(all: false, now: now, into: &actions) }
        }
        if phase == .inGame {
            if now >= nextInput {
                sendInput(now: now, into: &actions)
                // Keep to the tick grid, but never try to catch up a backlog after a stall.
                nextInput = max(nextInput + .nanoseconds(ServerClock.tick), now)
            }
            if now >= nextPing {
                pingSentAt = now
                nextPing = now + configuration.pingInterval
                actions.record(.probeSent)
                queue(.ping, vital: false, now: now, into: &actions) { $0.int(Wire.System.ping << 1 | 1) }
            }
        }
        flush(now: now, into: &actions)
        if now >= ackDue || now >= lastSent + Self.keepAliveInterval {
            sendControl(.keepAlive, now: now, into: &actions)
        }
    }

    /// Says goodbye with a close message.
    public mutating func close(now: Instant, into actions: inout ClientActions<Self>) {
        switch phase {
        case .idle, .closed:
            break
        case .connecting, .loading, .ready, .starting, .entering, .inGame:
            sendControl(.close, now: now, into: &actions)
        }
        phase = .closed
    }

    /// The socket failed: the connection is over.
    public mutating func transportFailed(_ reason: String, now: Instant, into actions: inout ClientActions<Self>) {
        guard phase != .closed else { return }
        end(.transport(reason), into: &actions)
    }

    /// Ends the connection on its own for `reason`.
    mutating func end(_ reason: CloseReason, into actions: inout ClientActions<Self>) {
        phase = .closed
        actions.closed(reason)
    }
}
