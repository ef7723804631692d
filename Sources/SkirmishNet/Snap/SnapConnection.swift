import NIOCore
import SkirmishWire

/// The client side of SNAP, the reference server's protocol (DESIGN §2), as a ``ClientProtocol`` plug-in: the first
/// of Skirmish's plug-ins, with nothing the others lack.
///
/// It runs the handshake (over UDP: Hello, the server's stateless-cookie Challenge, Hello with the cookie, Welcome;
/// over TCP and WebSocket: Hello, Welcome), keeps the seat's ``ReliableEndpoint``, seals and checks every datagram
/// with the session key, frames the TCP stream (a u32 length before each packet), pings to measure round trips,
/// answers the server's Pings, notices silence and unacknowledged sends, and resumes a dropped seat with the
/// Welcome's token while the reliable stream carries on underneath. It never reads a clock and never touches a
/// socket: that is what lets the tests play whole handshakes, drops and lossy exchanges by hand.
public struct SnapConnection: ClientProtocol, Sendable {
    /// SNAP's catalogue of messages.
    public typealias Message = SkirmishWire.Message
    /// A seat's `Welcome`: its peer id, match, seat, tick rate and resume token.
    public typealias Established = Welcome

    /// Where the connection is; the only state there is (no flags beside it).
    package enum State: Sendable, Hashable {
        /// Created; ``start(now:into:)`` begins the handshake.
        case idle
        /// Hello sent, no Welcome yet.
        case handshaking
        /// The server gave this player a seat.
        case seated(Welcome)
        /// The socket went away without a goodbye; the seat is held by the server for a while. Timers stop.
        case suspended(Welcome)
        /// A resume's Hello is out; what the old connection missed may already be arriving.
        case resuming(Welcome)
        /// Over, for the reason given.
        case closed(Cause)
    }

    /// SNAP on UDP, TCP and WebSocket, with a packet kind per message type.
    public static let description = ProtocolDescription(
        name: "snap", transports: [.udp, .tcp, .webSocket],
        packetKinds: MessageType.allCases.map { type in
            PacketKind(
                type.name, delivery: "\(type.delivery)",
                direction: type.direction == .both
                    ? .both : type.direction.allows(.client) ? .toServer : .fromServer)
        },
        figures: [.roundTrip, .resends, .loss, .handshake],
        errorKinds: ["server_quit", "handshake_loop"],
        checks: ["reply_type", "welcome_tick_rate"])

    /// The message types a legitimate client of the configured game sends or receives: control messages of every
    /// game plus the game's own range of the catalogue.
    public static func expects(kind: Int, with configuration: Configuration) -> Bool {
        let type = MessageType.allCases[kind]
        return expected(type, game: configuration.game, from: .client)
            || expected(type, game: configuration.game, from: .server)
    }

    /// Whether a legitimate client of `game` ever sees `type` coming from `sender`: control messages of every game
    /// plus the game's own range of the catalogue, in a direction the protocol allows.
    package static func expected(_ type: MessageType, game: GameKind, from sender: Role) -> Bool {
        guard type.direction.allows(sender) else { return false }
        // The quit messages sit in Snap's range but end a session of any game (ServerQuit at shutdown; Suns relays
        // OtherClientQuit too).
        if type == .serverQuit || type == .otherClientQuit || type == .clientQuit { return true }
        switch type.rawValue {
        case ..<0x0064: return true
        case 0x0064..<0x00C8: return game == .snap
        case 0x00C8..<0x012C: return game == .puck
        case 0x012C..<0x0190: return game == .suns
        // A game added by a program speaks only in `GamePayload`s.
        default: return !GameKind.builtIn.contains(game)
        }
    }

    /// The tick rate a built-in game's Welcome must announce.
    package static let expectedTickRate: UInt16 = 60

    package let configuration: Configuration
    package private(set) var state = State.idle
    /// How the transport carries packets: `.datagram` over UDP, `.stream` over TCP and WebSocket.
    let mode: ReliableEndpoint.Mode
    let transport: Transport
    /// The runtime's number for this player, sent in Pings.
    let player: UInt32

    private var endpoint: ReliableEndpoint
    /// The next Hello to send: the cookie and resume token change, the rest is fixed at init.
    private var hello: Hello
    private var welcome: Welcome?
    private var handshakeStarted = Instant.zero
    private var handshakeDeadline = Instant.distantFuture
    private var nextHello = Instant.distantFuture
    private var nextPing = Instant.distantFuture
    private var pings: UInt32 = 0
    private var challenges = 0
    /// The session key from the Welcome (UDP only): every later datagram is sealed and checked with it.
    private var key: SessionKey?
    /// The session key, once a Welcome gave one.
    package var sessionKey: SessionKey? { key }
    /// Reliable messages sent while away over a stream transport, which has no resend queue to keep them in; sent
    /// after the resume's Welcome. Bounded by `maxPendingReliable`, like the datagram endpoint's queue.
    private var away: [Message] = []
    /// Scratch for what one packet releases; kept so its storage is reused.
    private var inbox: [Message] = []
    /// Scratch for what one poll of the endpoint sends (acks, resends, keep-alives).
    private var outbox: [Packet] = []
    /// TCP bytes read but not yet a whole frame (at most one frame's length prefix and body).
    private var stream: [UInt8] = []
    private var counters = Stats()
    /// The endpoint's loss and resend counts already reported as metric events.
    private var reportedLost: UInt64 = 0
    private var reportedResends: UInt64 = 0

    /// An idle connection; ``start(now:into:)`` begins its handshake.
    public init(configuration: Configuration, setup: ConnectionSetup) {
        self.configuration = configuration
        transport = setup.transport
        mode = setup.transport == .udp ? .datagram : .stream
        player = UInt32(truncatingIfNeeded: setup.player)
        var reliability = configuration.reliability
        reliability.mode = mode
        endpoint = ReliableEndpoint(configuration: reliability, now: .uptimeNanoseconds(0))
        hello = Hello(
            game: configuration.game, seats: configuration.seats, match: configuration.match,
            name: Self.wireName(configuration.name ?? setup.name))
    }

    /// The handshake's resend and timeout, or once seated the next Ping and the reliable layer's timers.
    public var nextDeadline: Instant {
        switch state {
        case .handshaking, .resuming: min(nextHello, handshakeDeadline)
        case .seated: min(Instant(endpoint.nextDeadline), nextPing)
        case .idle, .suspended, .closed: .distantFuture
        }
    }

    /// The match of the last Welcome (0 before the first), for logs.
    public var matchID: UInt32 { welcome?.match ?? 0 }

    /// The token the last Welcome carried, for a resume; 0 until the first Welcome.
    package var resumeToken: UInt64 { welcome?.resumeToken ?? 0 }

    /// Whether a message sent now is stamped (seated, or away with a seat to come back to).
    package var acceptsSends: Bool {
        switch state {
        case .seated, .suspended, .resuming: true
        case .idle, .handshaking, .closed: false
        }
    }

    /// The connection's counters, with the reliable endpoint's.
    package var stats: Stats {
        var stats = counters
        let endpointStats = endpoint.stats
        stats.lost = endpointStats.lost
        stats.resends = endpointStats.resends
        stats.duplicates = endpointStats.duplicates
        stats.stale = endpointStats.stale
        stats.farFuture = endpointStats.farFuture
        stats.unsentAcks = endpointStats.unsentAcks
        stats.srtt = endpointStats.srtt
        return stats
    }

    // MARK: Connecting

    /// Starts the handshake: idle → handshaking, a Hello with a zero cookie and no resume token.
    public mutating func start(now: Instant, into actions: inout ClientActions<Self>) {
        guard case .idle = state else { return }
        state = .handshaking
        endpoint = ReliableEndpoint(configuration: endpoint.configuration, now: NIODeadline(now))
        startHandshake(token: 0, now: now, into: &actions)
    }

    /// The socket goes away without a goodbye (the reconnector, a phone changing networks): seated → suspended.
    /// Reliable messages sent meanwhile wait for the resume; timers stop.
    public mutating func suspend(now: Instant, into actions: inout ClientActions<Self>) {
        guard case .seated(let welcome) = state else {
            if case .closed = state { return }
            return finish(.local, into: &actions)
        }
        state = .suspended(welcome)
        nextPing = .distantFuture
        stream.removeAll(keepingCapacity: true)
    }

    /// Asks for the seat back from a new socket with the Welcome's resume token. The server resends what the old
    /// connection missed as soon as it sees the Hello, and that is delivered as it arrives, so no goal or card is
    /// lost.
    public mutating func resume(now: Instant, into actions: inout ClientActions<Self>) {
        guard let welcome, welcome.resumeToken != 0 else {
            if case .closed = state { return }
            return finish(.local, into: &actions)
        }
        switch state {
        case .suspended, .seated, .closed(.silence), .closed(.unacknowledged), .closed(.transportError):
            state = .resuming(welcome)
            stream.removeAll(keepingCapacity: true)
            startHandshake(token: welcome.resumeToken, now: now, into: &actions)
        case .idle, .handshaking, .resuming, .closed:
            break
        }
    }

    /// Says goodbye (a `Disconnect(quit)` when seated); no ``ClientEvent/closed(_:)`` follows.
    public mutating func close(now: Instant, into actions: inout ClientActions<Self>) {
        close(reason: .quit, now: now, into: &actions)
    }

    /// Says goodbye with `reason` (a `Disconnect` when seated); no ``ClientEvent/closed(_:)`` follows.
    package mutating func close(reason: DisconnectReason, now: Instant, into actions: inout ClientActions<Self>) {
        if case .seated = state { emit(Packet(number: 0, .disconnect(Disconnect(reason: reason))), into: &actions) }
        state = .closed(.local)
        stopTimers()
        away.removeAll()
    }

    /// The socket failed: closes with a transport error, unless already closed.
    public mutating func transportFailed(_ reason: String, now: Instant, into actions: inout ClientActions<Self>) {
        finish(.transportError(reason), into: &actions)
    }

    private mutating func startHandshake(token: UInt64, now: Instant, into actions: inout ClientActions<Self>) {
        hello.cookie = .zero
        hello.resumeToken = token
        challenges = 0
        handshakeStarted = now
        handshakeDeadline = now + configuration.handshakeTimeout
        sendHello(now: now, into: &actions)
    }

    private mutating func sendHello(now: Instant, into actions: inout ClientActions<Self>) {
        emit(Packet(number: 0, .hello(hello)), into: &actions)
        // A stream transport delivers the Hello or fails: only a datagram can be lost and needs resending.
        nextHello = mode == .datagram ? now + configuration.helloInterval : .distantFuture
    }

    private mutating func stopTimers() {
        handshakeDeadline = .distantFuture
        nextHello = .distantFuture
        nextPing = .distantFuture
    }

    /// Ends the connection on its own account, with a ``ClientEvent/closed(_:)`` event.
    private mutating func finish(_ cause: Cause, into actions: inout ClientActions<Self>) {
        if case .closed = state { return }
        state = .closed(cause)
        stopTimers()
        away.removeAll()
        actions.closed(cause.closeReason)
    }

    // MARK: Sending

    /// Sends a message with its type's delivery class.
    ///
    /// Seated: numbered by the endpoint and sent. Suspended or resuming: a reliable message is numbered now and sent
    /// once the resume's Welcome is back (the server would refuse it from the new address before then); an
    /// unreliable one would be stale by then and is skipped. Idle, handshaking or closed: dropped and counted in
    /// ``Stats/droppedSends``. Too many reliable messages awaiting an ack close the connection (`ack_timeout`).
    public mutating func send(_ message: Message, now: Instant, into actions: inout ClientActions<Self>) {
        switch state {
        case .seated:
            do throws(EndpointError) {
                emit(try endpoint.stamp(message, now: NIODeadline(now)), into: &actions)
            } catch {
                finish(.unacknowledged, into: &actions)
            }
        case .suspended, .resuming:
            guard message.type.delivery == .reliable else { return }
            guard mode == .datagram else {
                guard away.count < configuration.reliability.maxPendingReliable else {
                    return finish(.unacknowledged, into: &actions)
                }
                away.append(message)
                return
            }
            do throws(EndpointError) {
                _ = try endpoint.stamp(message, now: NIODeadline(now))
            } catch {
                finish(.unacknowledged, into: &actions)
            }
        case .idle, .handshaking, .closed:
            counters.droppedSends &+= 1
        }
    }

    /// Writes bytes as given, sealed with the session trailer over UDP once there is a key: they model a hostile
    /// *player*, whose packets the server must decode and refuse on their merits, not a stranger's, which it drops
    /// unread. Over TCP they are framed with a length prefix like any packet.
    public mutating func sendRaw(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>)
    {
        let size = min(bytes.count, WireLimits.maxFrame)
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<size])
        actions.write(maxLength: size + 4 + SessionKey.trailerSize) { buffer in
            switch transport {
            case .tcp:
                buffer.storeBytes(of: UInt32(size).bigEndian, as: UInt32.self)
                UnsafeMutableRawBufferPointer(rebasing: buffer[4...]).copyMemory(from: body)
                return size + 4
            case .webSocket:
                buffer.copyMemory(from: body)
                return size
            case .udp:
                buffer.copyMemory(from: body)
                guard let key else { return size }
                return key.seal(buffer, length: size, from: .client) ?? size
            }
        }
    }

    /// Encodes `packet` as this connection sends it: over UDP with the session trailer once there is a key (to
    /// every packet but a first-join Hello, and to a resume's Hello too, which proves the key to the server so that
    /// it hands over a seat whose old address still looks live), over TCP after its length.
    private mutating func emit(_ packet: Packet, into actions: inout ClientActions<Self>) {
        counters.packetsSent &+= 1
        var size = 0
        let sealing = mode == .datagram ? key : nil
        let framed = transport == .tcp
        actions.write(maxLength: WireLimits.maxFrame + 4 + SessionKey.trailerSize) { buffer in
            let body = framed ? UnsafeMutableRawBufferPointer(rebasing: buffer[4...]) : buffer
            do throws(EncodeError) {
                size = try packet.encode(into: body)
            } catch {
                return 0
            }
            if let sealing { size = sealing.seal(body, length: size, from: .client) ?? size }
            guard framed else { return size }
            buffer.storeBytes(of: UInt32(size).bigEndian, as: UInt32.self)
            return size + 4
        }
        guard size > 0 else { return }
        actions.record(.sent(kind: packet.message.type.index, bytes: size))
    }

    // MARK: Receiving

    /// Takes in what the transport read: a datagram, a WebSocket message, or the next bytes of a TCP stream.
    ///
    /// Over UDP a datagram must carry the session's trailer once a Welcome gave a key (``SessionKey``); the only
    /// packets taken without one are a Challenge, and a Reject while a handshake is in flight. The first Welcome
    /// is checked with the key it carries (it cannot be checked with anything else). What fails is counted in
    /// ``Stats/unauthenticated`` and dropped before anything in it is acted on. Over TCP, whole frames are taken
    /// as they complete; a length prefix over ``WireLimits/maxFrame`` breaks the stream and closes the connection.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>)
    {
        switch transport {
        case .udp: receiveDatagram(bytes, now: now, into: &actions)
        case .webSocket: receiveFrame(bytes, now: now, into: &actions)
        case .tcp: receiveStream(bytes, now: now, into: &actions)
        }
        reportLoss(into: &actions)
    }

    private mutating func receiveFrame(
        _ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>
    ) {
        let packet: Packet
        do throws(DecodeError) {
            packet = try Packet.decode(bytes, maxSize: WireLimits.maxFrame)
        } catch {
            counters.decodeErrors.count(error)
            return actions.record(.error(kind: Self.errorKind(error)))
        }
        receive(packet, size: bytes.count, now: now, into: &actions)
    }

    private mutating func receiveStream(
        _ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>
    ) {
        var input = bytes
        while !input.isEmpty {
            if case .closed = state { return }
            // Complete the length prefix, then the body, in `stream`; a frame that arrives whole in `input` is
            // decoded in place without a copy.
            if stream.isEmpty, input.count >= 4 {
                let length = Int(UInt32(bigEndian: input.loadUnaligned(as: UInt32.self)))
                guard length <= WireLimits.maxFrame else { return oversize(length, into: &actions) }
                if input.count >= 4 + length {
                    receiveFrame(UnsafeRawBufferPointer(rebasing: input[4..<(4 + length)]), now: now, into: &actions)
                    input = UnsafeRawBufferPointer(rebasing: input[(4 + length)...])
                    continue
                }
            }
            let needed: Int
            if stream.count < 4 {
                needed = 4 - stream.count
            } else {
                let length = Int(stream[0]) << 24 | Int(stream[1]) << 16 | Int(stream[2]) << 8 | Int(stream[3])
                guard length <= WireLimits.maxFrame else { return oversize(length, into: &actions) }
                needed = 4 + length - stream.count
            }
            let taken = min(needed, input.count)
            stream.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[0..<taken]))
            input = UnsafeRawBufferPointer(rebasing: input[taken...])
            if taken == needed, stream.count > 4 {
                stream.withUnsafeBytes { frame in
                    receiveFrame(UnsafeRawBufferPointer(rebasing: frame[4...]), now: now, into: &actions)
                }
                stream.removeAll(keepingCapacity: true)
            } else if taken == needed, stream.count == 4, stream == [0, 0, 0, 0] {
                // An empty frame: nothing to decode (and `tooShort` if it were).
                counters.decodeErrors.count(.tooShort)
                actions.record(.error(kind: "decode_too_short"))
                stream.removeAll(keepingCapacity: true)
            }
        }
    }

    private mutating func oversize(_ length: Int, into actions: inout ClientActions<Self>) {
        counters.decodeErrors.count(.tooLarge)
        stream.removeAll()
        actions.record(.error(kind: "decode_too_large"))
        finish(
            .transportError("a frame of \(length) bytes, over the \(WireLimits.maxFrame)-byte limit"), into: &actions)
    }

    private mutating func receiveDatagram(
        _ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>
    ) {
        // The trailer does not count against the packet's limit (WireProtocol.md, "Session trailer").
        guard bytes.count <= WireLimits.maxDatagram + SessionKey.trailerSize else {
            counters.decodeErrors.count(.tooLarge)
            return actions.record(.error(kind: "decode_too_large"))
        }
        if let key, let body = key.open(bytes, from: .server) {
            do throws(DecodeError) {
                let packet = try Packet.decode(body, maxSize: WireLimits.maxDatagram)
                return receive(packet, size: bytes.count, now: now, into: &actions)
            } catch {
                counters.decodeErrors.count(error)
                return actions.record(.error(kind: Self.errorKind(error)))
            }
        }
        let packet: Packet
        do throws(DecodeError) {
            packet = try Packet.decode(bytes, maxSize: WireLimits.maxDatagram)
        } catch .trailingBytes where key == nil {
            return receiveFirstWelcome(bytes, now: now, into: &actions)
        } catch {
            // Under a key, a datagram that neither verifies nor decodes bare is most likely forged.
            if key != nil {
                counters.unauthenticated &+= 1
                actions.record(.error(kind: "unauthenticated"))
            } else {
                counters.decodeErrors.count(error)
                actions.record(.error(kind: Self.errorKind(error)))
            }
            return
        }
        let handshaking: Bool
        switch state {
        case .handshaking, .resuming: handshaking = true
        case .idle, .seated, .suspended, .closed: handshaking = false
        }
        switch packet.message {
        case .challenge: break
        case .reject where handshaking: break
        default:
            counters.unauthenticated &+= 1
            return actions.record(.error(kind: "unauthenticated"))
        }
        receive(packet, size: bytes.count, now: now, into: &actions)
    }

    /// A datagram before any key: only a Welcome sealed with the key it carries is taken.
    private mutating func receiveFirstWelcome(
        _ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>
    ) {
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - SessionKey.trailerSize)])
        guard case .handshaking = state, let packet = try? Packet.decode(body, maxSize: WireLimits.maxDatagram),
            case .welcome(let welcome) = packet.message, welcome.sessionKey != .zero,
            welcome.sessionKey.open(bytes, from: .server) != nil
        else {
            counters.unauthenticated &+= 1
            return actions.record(.error(kind: "unauthenticated"))
        }
        key = welcome.sessionKey
        receive(packet, size: bytes.count, now: now, into: &actions)
    }

    /// Takes in one decoded packet (from the bytes paths, or a test's).
    package mutating func receive(_ packet: Packet, size: Int, now: Instant, into actions: inout ClientActions<Self>) {
        switch state {
        case .handshaking, .seated, .resuming:
            break
        case .idle, .suspended, .closed:
            // No socket is meant to be live: a late datagram of a socket the shell has not yet torn down.
            counters.packetsIgnored &+= 1
            return
        }
        let type = packet.message.type
        guard type.direction.allows(.server) else {
            counters.packetsIgnored &+= 1
            return actions.record(.check(name: "reply_type", passed: false))
        }
        counters.packetsReceived &+= 1
        actions.record(.received(kind: type.index, bytes: size))
        actions.record(
            .check(name: "reply_type", passed: Self.expected(type, game: configuration.game, from: .server)))
        switch packet.message {
        case .challenge(let challenge):
            switch state {
            case .handshaking, .resuming: break
            case .idle, .seated, .suspended, .closed: return
            }
            challenges += 1
            guard challenges <= configuration.maxChallenges else { return finish(.handshakeLoop, into: &actions) }
            hello.cookie = challenge.cookie
            // The first Challenge is answered at once; a later one in the same handshake rides on the next resend
            // (``Configuration/helloInterval`` after the last Hello), so a server that answers every Hello with a new
            // Challenge gets at most one Hello per interval instead of one per round trip.
            if challenges == 1 { sendHello(now: now, into: &actions) }
        case .reject(let reject):
            finish(.rejected(reject.reason), into: &actions)
        case .disconnect(let disconnect):
            finish(.remote(disconnect.reason), into: &actions)
        default:
            // Taken out of `self` first, so the array is uniquely owned and `removeAll` keeps its storage.
            var delivered = inbox
            inbox = []
            delivered.removeAll(keepingCapacity: true)
            _ = endpoint.receive(packet, now: NIODeadline(now)) { delivered.append($0) }
            for message in delivered {
                if case .closed = state { break }
                deliver(message, now: now, into: &actions)
            }
            inbox = delivered
            // An ack owed now goes now, not at the next tick: the server's resend timer is running.
            if endpoint.owesAck, case .seated = state { runTimers(now: now, into: &actions) }
        }
    }

    private mutating func deliver(_ message: Message, now: Instant, into actions: inout ClientActions<Self>) {
        switch message {
        case .welcome(let welcome):
            self.welcome = welcome
            // The session's key, once (a resume's Welcome carries the same one); a Welcome fed in decoded (a test)
            // sets it here, one from the bytes path already has.
            if mode == .datagram, key == nil, welcome.sessionKey != .zero { key = welcome.sessionKey }
            switch state {
            case .handshaking:
                state = .seated(welcome)
                stopTimers()
                schedulePing(now: now)
                actions.record(.handshake(now - handshakeStarted))
                if GameKind.builtIn.contains(configuration.game) {
                    actions.record(
                        .check(name: "welcome_tick_rate", passed: welcome.tickRate == Self.expectedTickRate))
                }
                actions.established(welcome)
            case .resuming:
                // The time away counts against neither the silence nor the ack timeout, and what the server could
                // not receive meanwhile is due at once.
                endpoint.reattached(now: NIODeadline(now))
                state = .seated(welcome)
                stopTimers()
                schedulePing(now: now)
                actions.resumed(welcome)
                flushAway(now: now, into: &actions)
            case .seated:
                // A second Welcome that is not a resend (those the endpoint drops as duplicates): keep its token,
                // but the seat was already announced.
                state = .seated(welcome)
            case .idle, .suspended, .closed:
                break
            }
        case .ping(let ping):
            guard case .seated = state else { return }
            do throws(EndpointError) {
                emit(try endpoint.stamp(.pong(ping), now: NIODeadline(now)), into: &actions)
            } catch {
                finish(.unacknowledged, into: &actions) // unreachable: a Pong is unreliable and never queued
            }
        case .pong(let pong):
            let rtt = now.seconds - pong.sendTime
            if rtt >= 0, rtt < 60 { actions.record(.roundTrip(.nanoseconds(Int64((rtt * 1e9).rounded())))) }
        case .serverQuit:
            // The server is going away (a restart, a deploy): the connection is over, and the player's return is
            // timed as a reconnect.
            finish(.serverQuit, into: &actions)
        default:
            // While a resume's handshake is in flight, the server resends what the old connection missed: those
            // messages carry the seat's reliable numbers from before the Welcome, and dropping them would lose a
            // goal or a card for good.
            switch state {
            case .seated, .resuming: actions.deliver(message)
            case .idle, .handshaking, .suspended, .closed: break
            }
        }
    }

    private mutating func flushAway(now: Instant, into actions: inout ClientActions<Self>) {
        guard !away.isEmpty else { return }
        var held = away
        away = []
        for message in held {
            guard case .seated = state else { break }
            send(message, now: now, into: &actions)
        }
        held.removeAll(keepingCapacity: true)
        away = held
    }

    // MARK: Timers

    /// Runs what is due: Hello resends and the handshake timeout; once seated, the round-trip Ping, the endpoint's
    /// resends, acks and keep-alive Pings, and its silence and ack timeouts.
    public mutating func tick(now: Instant, into actions: inout ClientActions<Self>) {
        runTimers(now: now, into: &actions)
        reportLoss(into: &actions)
    }

    private mutating func schedulePing(now: Instant) {
        nextPing = configuration.pingInterval.map { now + $0 } ?? .distantFuture
    }

    private mutating func runTimers(now: Instant, into actions: inout ClientActions<Self>) {
        switch state {
        case .handshaking, .resuming:
            if now >= handshakeDeadline { return finish(.handshakeTimeout, into: &actions) }
            if now >= nextHello { sendHello(now: now, into: &actions) }
        case .seated:
            if now >= nextPing {
                pings &+= 1
                schedulePing(now: now)
                send(.ping(Ping(player: player, count: pings, sendTime: now.seconds)), now: now, into: &actions)
                actions.record(.probeSent)
                guard case .seated = state else { return }
            }
            // Taken out of `self` first, as `inbox` is, so its storage is reused.
            var polled = outbox
            outbox = []
            polled.removeAll(keepingCapacity: true)
            let status = endpoint.poll(now: NIODeadline(now)) { polled.append($0) }
            for packet in polled { emit(packet, into: &actions) }
            polled.removeAll(keepingCapacity: true)
            outbox = polled
            switch status {
            case .alive: break
            case .timedOut(.silence): finish(.silence, into: &actions)
            case .timedOut(.unacknowledged): finish(.unacknowledged, into: &actions)
            }
        case .idle, .suspended, .closed:
            break
        }
    }

    /// Reports the endpoint's new losses and resends since the last call.
    private mutating func reportLoss(into actions: inout ClientActions<Self>) {
        let stats = endpoint.stats
        if stats.lost > reportedLost {
            actions.record(.lost(count: Int(stats.lost - reportedLost)))
            reportedLost = stats.lost
        }
        if stats.resends > reportedResends {
            actions.record(.resent(count: Int(stats.resends - reportedResends)))
            reportedResends = stats.resends
        }
    }

    /// The `kind` label a packet that does not decode is counted under (`decode_bad_magic`, …).
    package static func errorKind(_ error: DecodeError) -> String {
        switch error {
        case .tooShort: "decode_too_short"
        case .badMagic: "decode_bad_magic"
        case .unknownType: "decode_unknown_type"
        case .truncatedPayload: "decode_truncated_payload"
        case .trailingBytes: "decode_trailing_bytes"
        case .badString: "decode_bad_string"
        case .tooLarge: "decode_too_large"
        case .badValue: "decode_bad_value"
        }
    }

    /// `name` as the wire takes it: no NUL bytes, at most ``WireLimits/maxName`` UTF-8 bytes, cut between characters.
    static func wireName(_ name: String) -> String {
        var result = name.filter { $0 != "\0" }
        while result.utf8.count > WireLimits.maxName { result.removeLast() }
        return result
    }
}
