import SkirmishNet
import SkirmishWire

// The "Testing your own server" article's protocol, step 2: one connection as a value machine.

/// The client side of the key-value protocol as a Skirmish protocol plug-in.
///
/// Over UDP it resends its hello until welcomed; over TCP it frames each packet with a 2-byte length. Every request
/// carries an id the reply echoes, so a reply gives a round trip; a request is a probe for the reply rate.
struct KeyValueConnection: ClientProtocol {
    /// What agents send and receive.
    enum Message: Equatable {
        case put(key: UInt16, value: UInt32)
        case get(key: UInt16)
        /// A reply: the value now stored under `key`.
        case value(key: UInt16, value: UInt32)
    }

    /// The plug-in's options, from the script's `protocol:` block.
    struct Configuration: Sendable, Hashable {
        var handshakeTimeout: Duration = .seconds(3)
        var silenceTimeout: Duration = .seconds(5)
    }

    /// The session number the server gave.
    typealias Established = UInt32

    static let description = ProtocolDescription(
        name: "keyval", transports: [.udp, .tcp],
        packetKinds: [
            PacketKind("hello", delivery: "control", direction: .toServer),
            PacketKind("welcome", delivery: "control", direction: .fromServer),
            PacketKind("put", delivery: "request", direction: .toServer),
            PacketKind("get", delivery: "request", direction: .toServer),
            PacketKind("value", delivery: "reply", direction: .fromServer),
            PacketKind("bye", delivery: "control"),
        ],
        figures: [.roundTrip, .handshake],
        errorKinds: ["bad_packet", "unknown_reply", "closed_by_server"])

    private enum State { case idle, joining, joined, closed }

    private let configuration: Configuration
    private let transport: Transport
    private let name: String
    private var state = State.idle
    private var session: UInt32 = 0
    private var nextID: UInt32 = 1
    private var joinedAt = Instant.zero
    private var nextHello = Instant.distantFuture
    private var handshakeDeadline = Instant.distantFuture
    private var lastHeard = Instant.zero
    /// Send times of the requests in flight, by id modulo its size: a reply finds its request in one look.
    private var inFlight = [(id: UInt32, sent: Instant)](repeating: (0, .zero), count: 64)
    /// TCP bytes read but not yet a whole frame.
    private var stream: [UInt8] = []

    init(configuration: Configuration, setup: ConnectionSetup) {
        self.configuration = configuration
        transport = setup.transport
        name = "\(setup.name)-\(setup.player)"
    }

    var nextDeadline: Instant {
        switch state {
        case .joining: min(nextHello, handshakeDeadline)
        case .joined: lastHeard + configuration.silenceTimeout
        case .idle, .closed: .distantFuture
        }
    }

    mutating func start(now: Instant, into actions: inout ClientActions<Self>) {
        state = .joining
        joinedAt = now
        handshakeDeadline = now + configuration.handshakeTimeout
        sendHello(now: now, into: &actions)
    }

    mutating func receive(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>) {
        guard transport == .tcp else { return take(bytes, now: now, into: &actions) }
        stream.append(contentsOf: bytes)
        while stream.count >= 2 {
            let length = Int(stream[0]) << 8 | Int(stream[1])
            guard length <= 512 else {
                actions.record(.error(kind: "bad_packet"))
                return finish(.transport("a frame of \(length) bytes"), into: &actions)
            }
            guard stream.count >= 2 + length else { return }
            stream.withUnsafeBytes {
                take(UnsafeRawBufferPointer(rebasing: $0[2..<(2 + length)]), now: now, into: &actions)
            }
            stream.removeFirst(2 + length)
        }
    }

    mutating func send(_ message: Message, now: Instant, into actions: inout ClientActions<Self>) {
        guard state == .joined else { return }
        let id = nextID
        nextID &+= 1
        inFlight[Int(id % 64)] = (id, now)
        switch message {
        case .put(let key, let value): write(.put(key: key, value: value), id: id, into: &actions)
        case .get(let key): write(.get(key: key), id: id, into: &actions)
        case .value: return
        }
        actions.record(.probeSent)
    }

    mutating func tick(now: Instant, into actions: inout ClientActions<Self>) {
        switch state {
        case .joining:
            if now >= handshakeDeadline { return finish(.handshakeTimeout(), into: &actions) }
            if now >= nextHello { sendHello(now: now, into: &actions) }
        case .joined:
            if now >= lastHeard + configuration.silenceTimeout { finish(.silence(), into: &actions) }
        case .idle, .closed:
            break
        }
    }

    mutating func close(now: Instant, into actions: inout ClientActions<Self>) {
        if state == .joined { write(.bye, id: 0, into: &actions) }
        state = .closed
    }

    mutating func transportFailed(_ reason: String, now: Instant, into actions: inout ClientActions<Self>) {
        finish(.transport(reason), into: &actions)
    }

    // MARK: Packets

    private mutating func sendHello(now: Instant, into actions: inout ClientActions<Self>) {
        write(.hello(name: name), id: 0, into: &actions)
        // A stream delivers the hello or fails; only a datagram needs resending.
        nextHello = transport == .udp ? now + .milliseconds(250) : .distantFuture
    }

    /// Encodes a packet (after its 2-byte length over TCP) and counts it under its kind.
    private mutating func write(_ body: KeyValuePacket.Body, id: UInt32, into actions: inout ClientActions<Self>) {
        let packet = KeyValuePacket(session: session, id: id, body: body)
        let framed = transport == .tcp
        var size = 0
        actions.write(maxLength: 64) { buffer in
            size = packet.encode(into: framed ? UnsafeMutableRawBufferPointer(rebasing: buffer[2...]) : buffer)
            guard framed, size > 0 else { return size }
            buffer[0] = UInt8(size >> 8)
            buffer[1] = UInt8(size & 0xFF)
            return size + 2
        }
        actions.record(.sent(kind: Int(packet.type) - 1, bytes: size))
    }

    /// One whole packet from the server.
    private mutating func take(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>) {
        guard state == .joining || state == .joined else { return }
        guard let packet = KeyValuePacket.decode(bytes) else { return actions.record(.error(kind: "bad_packet")) }
        lastHeard = now
        actions.record(.received(kind: Int(packet.type) - 1, bytes: bytes.count))
        switch packet.body {
        case .welcome where state == .joining:
            state = .joined
            session = packet.session
            nextHello = .distantFuture
            actions.record(.handshake(now - joinedAt))
            actions.established(session)
        case .value(let key, let value) where state == .joined:
            let slot = Int(packet.id % 64)
            guard inFlight[slot].id == packet.id, packet.id != 0 else {
                return actions.record(.error(kind: "unknown_reply"))
            }
            inFlight[slot].id = 0
            actions.record(.roundTrip(now - inFlight[slot].sent))
            actions.deliver(.value(key: key, value: value))
        case .bye:
            finish(CloseReason(kind: "closed_by_server", detail: "the server said bye", isOutage: true), into: &actions)
        default:
            actions.record(.error(kind: "bad_packet"))
        }
    }

    private mutating func finish(_ reason: CloseReason, into actions: inout ClientActions<Self>) {
        guard state != .closed else { return }
        state = .closed
        actions.closed(reason)
    }
}
