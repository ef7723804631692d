import NIOCore
import NIOPosix
import SkirmishWire
import Testing

@testable import SkirmishConformance

/// One broken rule: what the proxy does wrong, and the check that must notice.
enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The Challenge goes out with packet number 1 instead of 0.
    case numberedChallenge
    /// The Challenge is padded to 86 bytes: larger than the 74-byte Hello.
    case paddedChallenge
    /// A zero-cookie Hello is seated: the proxy answers the Challenge itself, as if the server took no cookie.
    case seatsWithoutCookie
    /// Welcomes say 30 Hz.
    case wrongTickRate
    /// Datagrams with a missing or wrong trailer are sealed again and passed on, as if the MAC went unchecked.
    case trailerUnchecked
    /// The server's resends of relayed Chat messages are dropped: each reaches the client once at most, or never.
    case noResends
    /// Every unreliable packet from the server carries number 7.
    case frozenNumbering
    /// Client unreliable packets are renumbered in arrival order, so the server takes stale ones as new.
    case acceptsStale
    /// Snapshots show the other paddle unmirrored.
    case unmirrored
    /// Snapshots show the own paddle 200 px up the table, in the other half.
    case paddleEscapes
    /// Snapshots carry a state hash with its low bit flipped.
    case wrongHash
    /// Hellos with a resume token are answered `Reject(resumeExpired)`.
    case refusesResume
    /// The server's Pings never reach the client.
    case dropsPings
    /// The proxy pings the server for every session every 300 ms, so no session ever goes silent.
    case keepsSilentPeers
    /// After the first datagram that does not decode, nothing passes either way: the server is dead.
    case diesOnGarbage
    /// Welcomes never reach the client: every handshake fails.
    case dropsWelcomes
    /// The server's Acks never reach the client.
    case dropsAcks
    /// The server's Acks reach the client 400 ms late.
    case lateAcks
    /// The server's Acks say nothing of packets beyond the cumulative number (a zero bitfield).
    case zeroAckBits
    /// Pongs echo a send time 1 ms later than the Ping's.
    case shiftsPongTime
    /// Seat 1's snapshots carry velocities not negated (the positions still mirrored).
    case unmirroredVelocities
    /// Every other snapshot is dropped: 15 Hz instead of 30.
    case halfRateSnapshots
    /// `CardTurned` carries a state hash with its low bit flipped.
    case wrongSnapHash
    /// A relayed `SunsStrike` arrives with its x one f32 step higher.
    case altersStrike
    /// The client's Disconnects never reach the server: its session goes on.
    case ignoresDisconnect
    /// An Ack naming reliable numbers the server never sent is taken: the packets it seems to cover are not resent.
    case trustsUnsentAck
    /// Over a stream, every unreliable packet from the server carries number 7 instead of 0.
    case numbersStreams
    /// Snapshots carry their tick times 1.5: three ticks apart instead of two.
    case skipsTicks
    /// A client's reliable packet 256 or more ahead of the ones before never reaches the server: it is not acked.
    case silentBeyondWindow
    /// Every resend of a reliable packet from the server comes twice, 10 ms apart: resends that do not back off.
    case steadyResends
    /// Bit 0 of a client's Ack is cleared on its way: the server never sees the packet it names acknowledged.
    case ignoresAckBitZero
    /// A Hello's name with characters the spec refuses is replaced by a clean one: bad names are never refused.
    case acceptsBadNames
    /// The trailer of a sealed resume Hello is cut off: the server never sees the proof of the key.
    case refusesSealedResume
    /// `Reject(11 seat in use)` arrives as `Reject(6 resume expired)`.
    case seatInUseAsExpired
    /// Seat 1's PuckMatchOver names the winner by absolute seat, unmirrored.
    case unmirroredOver
    /// Seat 1's GoalScored names the scorer by absolute seat, unmirrored.
    case unmirroredGoal
    /// From the third `CardTurned` on, the state hash has its low bit flipped: the first turns are right.
    case wrongLaterSnapHash
    /// `PlayerCalledSnap` carries a state hash with its low bit flipped.
    case wrongCallHash
    /// A TCP frame announcing more than 64 KiB is swallowed, and the connection left open.
    case keepsOversizeOpen
    /// Over WebSocket, every close frame from the server carries code 1000 instead of its own.
    case wrongCloseCodes
    /// Not a broken rule: Snap Hellos for 2 seats (past the cookie) get `Reject(4)`, as from a server that seats Snap
    /// for 3 or 4 players only. The survey must still find Snap hosted.
    case refusesTwoSeatSnap
    /// The proxy acknowledges every reliable packet of the server on the client's behalf (a sealed Ack of all it
    /// passed on): the server never sees a peer that does not ack, so its ack timeout never drops one.
    case acksForClients
    /// `ServerReady` counts positions anticlockwise, `(receiver's seat − seat) mod n`: the rule's own answer at two
    /// seats, a wrong one at three and four. So that it shows, Snap for two is refused as ``refusesTwoSeatSnap``
    /// refuses it, and `snap.deal` plays the four seats the survey then finds.
    case anticlockwisePositions

    /// The check this fault must fail.
    var check: String {
        switch self {
        case .numberedChallenge: "handshake.vector"
        case .paddedChallenge: "handshake.amplification"
        case .seatsWithoutCookie: "handshake.cookie"
        case .wrongTickRate: "session.join"
        case .trailerUnchecked: "session.trailer"
        case .noResends: "reliable.relay"
        case .frozenNumbering: "unreliable.numbering"
        case .acceptsStale: "unreliable.stale"
        case .unmirrored: "puck.mirroring"
        case .paddleEscapes: "puck.limits"
        case .wrongHash: "puck.replica"
        case .refusesResume: "session.resume"
        case .dropsPings: "session.keepalive"
        case .keepsSilentPeers: "session.timeout"
        case .diesOnGarbage: "hostile.input"
        case .dropsWelcomes: "handshake.games"
        case .dropsAcks, .lateAcks, .zeroAckBits: "reliable.ack"
        case .shiftsPongTime: "session.pong"
        case .unmirroredVelocities: "puck.replica"
        case .halfRateSnapshots: "puck.rate"
        case .wrongSnapHash: "snap.deal"
        case .altersStrike: "suns.relay"
        case .ignoresDisconnect: "session.disconnect"
        case .trustsUnsentAck: "reliable.unsent-ack"
        case .numbersStreams: "stream.numbering"
        case .skipsTicks: "puck.rate"
        case .silentBeyondWindow: "reliable.ack"
        case .steadyResends, .ignoresAckBitZero: "reliable.resend"
        case .acceptsBadNames: "handshake.order"
        case .refusesSealedResume, .seatInUseAsExpired: "session.resume-live"
        case .unmirroredOver: "puck.over"
        case .unmirroredGoal: "puck.replica"
        case .wrongLaterSnapHash, .wrongCallHash: "snap.deal"
        case .keepsOversizeOpen: "stream.oversize"
        case .refusesTwoSeatSnap: "handshake.games"
        case .wrongCloseCodes: "stream.websocket-close"
        case .acksForClients: "session.ack-timeout"
        case .anticlockwisePositions: "snap.deal"
        }
    }

    /// Words the check's failure line must hold: it failed on this fault's rule, not on something else.
    var failure: String {
        switch self {
        case .numberedChallenge: "a 26-byte Challenge starting 534e4150 00000000 0002"
        case .paddedChallenge: "at most 74 bytes in reply to a first Hello"
        case .seatsWithoutCookie: "a Welcome (a seat with no cookie)"
        case .wrongTickRate: "tick rate 60 in both Welcomes"
        case .trailerUnchecked: "trailer"
        case .noResends: "once each, in order"
        case .frozenNumbering: "each unreliable number newer than the one before"
        case .acceptsStale: "dropped (no Pong)"
        case .unmirrored: "to see B's paddle at"
        case .paddleEscapes: "own half, on the table"
        case .wrongHash: "reproduce their state hash"
        case .refusesResume: "a Welcome answering the resume"
        case .dropsPings: "Pings in 3.5 s to an idle peer"
        case .keepsSilentPeers: "the silent peer was kept"
        case .diesOnGarbage: "to stay seated and keep playing"
        case .dropsWelcomes: "a Welcome or Reject(4 bad request) to a Hello for each of puck, snap and suns"
        case .dropsAcks: "an Ack of cumulative 1, bitfield 0b0 after reliable packet 1, saw no Ack"
        case .lateAcks: "the Ack of reliable packet 1 within"
        case .zeroAckBits: "bitfield 0b10 after packet 3"
        case .shiftsPongTime: "bit for bit"
        case .unmirroredVelocities: "vx"
        case .halfRateSnapshots: "snapshots in 5 s to A"
        case .wrongSnapHash: "the state hash the rules give after seat 0's first turn"
        case .altersStrike: "unchanged and in order"
        case .ignoresDisconnect: "a Pong: the session went on"
        case .trustsUnsentAck: "must be ignored, saw no resend"
        case .numbersStreams: "number 0 on every packet over tcp"
        case .skipsTicks: "two ticks after the one before"
        case .silentBeyondWindow: "after packet 306, beyond the reorder window"
        case .steadyResends: "twice the one before"
        case .ignoresAckBitZero: "(bit 0 names it)"
        case .acceptsBadNames: "Reject(10 bad name)"
        case .refusesSealedResume: "sealed with the session key, saw Reject(11)"
        case .seatInUseAsExpired: "Reject(11 seat in use) to a resume Hello"
        case .unmirroredOver: "winner 0 (me)"
        case .unmirroredGoal: "GoalScored to seat 1 naming 1 (them) as the scorer"
        case .wrongLaterSnapHash: "to see turn 3"
        case .wrongCallHash: "call with no pair showing (wrong)"
        case .keepsOversizeOpen: "still open"
        case .refusesTwoSeatSnap: ""
        case .wrongCloseCodes: "a close frame with code 1003 after a text message, saw close code 1000"
        case .acksForClients: "after a Welcome never acknowledged (the ack timeout drops the session at 10 s)"
        case .anticlockwisePositions: "at position 0, then, clockwise by seat, peer"
        }
    }

    var testDescription: String { "\(rawValue) fails \(check)" }
}

/// What a fault does to one packet the server sends a client, on any transport.
enum Rewrite {
    case pass
    case drop
    case replace(Message)
    case delay(TimeAmount)
}

extension Fault {
    /// Whether the proxy can break the rule on a stream (TCP) as well: the faults that rewrite, drop or delay the
    /// server's messages, or stop the server; the others break numbering, cookies or trailers, which streams lack.
    var onStreams: Bool {
        switch self {
        case .wrongTickRate, .dropsPings, .unmirrored, .paddleEscapes, .wrongHash, .diesOnGarbage, .dropsWelcomes,
            .shiftsPongTime, .unmirroredVelocities, .halfRateSnapshots, .wrongSnapHash, .altersStrike,
            .ignoresDisconnect, .numbersStreams, .skipsTicks, .acceptsBadNames, .seatInUseAsExpired, .unmirroredOver,
            .unmirroredGoal, .wrongLaterSnapHash, .wrongCallHash, .keepsOversizeOpen:
            true
        default: false
        }
    }

    /// Whether the fault's check applies to UDP (the UDP proxy's tests), rather than to streams alone, and the fault
    /// breaks a rule.
    var onDatagrams: Bool {
        breaksARule && (ConformanceSuite.all.first { $0.id == check }?.transports.contains(.udp) ?? false)
    }

    /// Whether the fault is one of WebSocket framing, which ``WebSocketCloseProxy`` breaks.
    var onWebSocket: Bool { self == .wrongCloseCodes }

    /// Whether the fault breaks a rule, so its check must fail; ``refusesTwoSeatSnap`` is a legitimate server.
    var breaksARule: Bool { self != .refusesTwoSeatSnap }

    /// Whether the proxy answers a Snap Hello for two with `Reject(4)` under this fault, as from a server that seats
    /// Snap for 3 or 4 only; any other fault combines with that refusal through `FaultProxy.start`'s
    /// `refusingTwoSeatSnap`.
    var refusesSnapForTwo: Bool { self == .refusesTwoSeatSnap || self == .anticlockwisePositions }

    /// What the fault does to `message` on its way from the server to a client seated at `seat`; `snapshots` counts
    /// the snapshots that client was sent.
    func rewrite(_ message: Message, seat: UInt8?, snapshots: inout Int) -> Rewrite {
        switch (self, message) {
        case (.wrongTickRate, .welcome(var welcome)):
            welcome.tickRate = 30
            return .replace(.welcome(welcome))
        case (.dropsPings, .ping), (.dropsWelcomes, .welcome), (.dropsAcks, .ack):
            return .drop
        case (.unmirrored, .tableSnapshot(var snapshot)):
            snapshot.them.x = 320 - snapshot.them.x
            snapshot.them.y = 480 - snapshot.them.y
            return .replace(.tableSnapshot(snapshot))
        case (.paddleEscapes, .tableSnapshot(var snapshot)):
            snapshot.me.y -= 200
            return .replace(.tableSnapshot(snapshot))
        case (.wrongHash, .tableSnapshot(var snapshot)):
            snapshot.stateHash ^= 1
            return .replace(.tableSnapshot(snapshot))
        case (.lateAcks, .ack):
            return .delay(.milliseconds(400))
        case (.zeroAckBits, .ack(var ack)):
            ack.bitfield = 0
            return .replace(.ack(ack))
        case (.shiftsPongTime, .pong(var pong)):
            pong.sendTime += 0.001
            return .replace(.pong(pong))
        case (.unmirroredVelocities, .tableSnapshot(var snapshot)) where seat == 1:
            snapshot.me.vx.negate()
            snapshot.me.vy.negate()
            snapshot.them.vx.negate()
            snapshot.them.vy.negate()
            snapshot.puck.vx.negate()
            snapshot.puck.vy.negate()
            return .replace(.tableSnapshot(snapshot))
        case (.halfRateSnapshots, .tableSnapshot):
            snapshots += 1
            return snapshots % 2 == 0 ? .pass : .drop
        case (.wrongSnapHash, .cardTurned(var turned)):
            turned.stateHash ^= 1
            return .replace(.cardTurned(turned))
        case (.altersStrike, .sunsStrike(var strike)):
            strike.x = strike.x.nextUp
            return .replace(.sunsStrike(strike))
        case (.skipsTicks, .tableSnapshot(var snapshot)):
            snapshot.tick &+= snapshot.tick / 2
            return .replace(.tableSnapshot(snapshot))
        case (.seatInUseAsExpired, .reject(let reject)) where reject.reason == .seatInUse:
            return .replace(.reject(Reject(reason: .resumeExpired, text: reject.text)))
        case (.wrongLaterSnapHash, .cardTurned(var turned)):
            // `snapshots` counts the CardTurned messages this client was sent.
            snapshots += 1
            guard snapshots >= 3 else { return .pass }
            turned.stateHash ^= 1
            return .replace(.cardTurned(turned))
        case (.wrongCallHash, .playerCalledSnap(var called)):
            called.stateHash ^= 1
            return .replace(.playerCalledSnap(called))
        case (.unmirroredGoal, .goalScored(var goal)) where seat == 1:
            goal.scorer = goal.scorer == .me ? .them : .me
            return .replace(.goalScored(goal))
        case (.unmirroredOver, .puckMatchOver(var over)) where seat == 1:
            over.winner = over.winner == .me ? .them : .me
            return .replace(.puckMatchOver(over))
        case (.anticlockwisePositions, .serverReady(var ready)):
            let count = ready.players.count
            for index in ready.players.indices {
                ready.players[index].position = UInt8((count - Int(ready.players[index].position)) % count)
            }
            return .replace(.serverReady(ready))
        default:
            return .pass
        }
    }
}

/// A UDP proxy in front of the real server that breaks one rule of the protocol (a ``Fault``), or none; it may also
/// refuse Snap for two (`refusingTwoSeatSnap`), so that a fault of Snap's rules shows at the four seats the suite then
/// plays.
///
/// Each client address gets its own upstream socket, so the server sees one address per client as it would without
/// the proxy. The proxy reads the session key from each Welcome (it is in the clear, sealed under itself), which is
/// what lets it rewrite sealed packets and seal them again.
final class FaultProxy: @unchecked Sendable {
    // @unchecked: every mutable field is touched only on `loop`, the one thread of the proxy's own group (channel
    // handlers and the keepalive timer all run there).
    let address: SocketAddress
    private let group: MultiThreadedEventLoopGroup
    private let front: any Channel
    private let relay: Relay

    private init(address: SocketAddress, group: MultiThreadedEventLoopGroup, front: any Channel, relay: Relay) {
        self.address = address
        self.group = group
        self.front = front
        self.relay = relay
    }

    static func start(
        fault: Fault?, refusingTwoSeatSnap: Bool = false, server: SocketAddress
    ) async throws -> FaultProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let relay = Relay(
            fault: fault, refusesSnapForTwo: refusingTwoSeatSnap || fault?.refusesSnapForTwo == true, server: server,
            loop: loop)
        let front = try await DatagramBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        Reader { envelope in
                            relay.fromClient(envelope.data, client: envelope.remoteAddress)
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        try await loop.submit { relay.front = front }.get()
        if fault == .keepsSilentPeers {
            loop.scheduleRepeatedTask(initialDelay: .milliseconds(300), delay: .milliseconds(300)) { _ in
                relay.keepAlive()
            }
        }
        return FaultProxy(address: front.localAddress!, group: group, front: front, relay: relay)
    }

    func stop() async {
        try? await front.close()
        try? await group.shutdownGracefully()
    }
}

/// The proxy's state, confined to its loop.
private final class Relay: @unchecked Sendable {
    // @unchecked: see FaultProxy; only its loop touches it.
    // @unchecked: like the relay, a link is read and written only on the proxy's loop.
    final class Link: @unchecked Sendable {
        var upstream: (any Channel)?
        var waiting: [[UInt8]] = []
        var key: SessionKey?
        var autoCookie: Hello?
        var seenReliable: Set<UInt32> = []
        var upNumber: UInt32 = 0
        var seat: UInt8?
        var snapshots = 0
        /// The cumulative number of an Ack beyond what the server sent (trustsUnsentAck).
        var forgedAck: UInt32?
        /// The newest reliable number the client sent (silentBeyondWindow).
        var clientReliable: UInt32 = 1
    }

    let fault: Fault?
    /// Whether Snap Hellos for two get `Reject(4)`, whatever the fault.
    let refusesSnapForTwo: Bool
    let server: SocketAddress
    let loop: any EventLoop
    var front: (any Channel)?
    var links: [SocketAddress: Link] = [:]
    var dead = false

    init(fault: Fault?, refusesSnapForTwo: Bool, server: SocketAddress, loop: any EventLoop) {
        self.fault = fault
        self.refusesSnapForTwo = refusesSnapForTwo
        self.server = server
        self.loop = loop
    }

    // MARK: Client to server

    func fromClient(_ buffer: ByteBuffer, client: SocketAddress) {
        guard !dead else { return }
        let bytes = Array(buffer.readableBytesView)
        let link = self.link(for: client)
        guard let (packet, sealed) = Self.decode(bytes, key: link.key, from: .client) else {
            if fault == .diesOnGarbage { dead = true }
            return up(bytes, link: link)
        }
        switch (fault, packet.message) {
        case (_, .hello(let hello))
        where refusesSnapForTwo && hello.game == .snap && hello.seats == 2 && hello.cookie != .zero:
            let reject = try! Packet(.reject(Reject(reason: .badRequest, text: "snap takes 3-4 seats"))).encoded()
            return down(reject, to: client)
        case (.seatsWithoutCookie?, .hello(let hello)) where hello.cookie == .zero && hello.resumeToken == 0:
            link.autoCookie = hello
        case (.refusesResume?, .hello(let hello)) where hello.resumeToken != 0:
            let reject = try! Packet(.reject(Reject(reason: .resumeExpired, text: "no"))).encoded()
            return down(reject, to: client)
        case (.ignoresDisconnect?, .disconnect):
            return
        case (.silentBeyondWindow?, _) where sealed && packet.message.type.delivery == .reliable:
            guard packet.number <= link.clientReliable &+ 255 else { return }
            link.clientReliable = max(link.clientReliable, packet.number)
        case (.ignoresAckBitZero?, .ack(var ack)) where sealed && ack.bitfield & 1 != 0:
            ack.bitfield &= ~1
            return up(seal(Packet(.ack(ack)), link.key!, from: .client), link: link)
        case (.acceptsBadNames?, .hello(var hello)) where !PlayerName.isAcceptable(hello.name):
            hello.name = "clean"
            return up(try! Packet(.hello(hello)).encoded(), link: link)
        case (.refusesSealedResume?, .hello(let hello)) where hello.resumeToken != 0:
            let length = (try? packet.encoded().count) ?? bytes.count
            return up(Array(bytes.prefix(length)), link: link)
        case (.trustsUnsentAck?, .ack(let ack)) where sealed && ack.cumulative > (link.seenReliable.max() ?? 0):
            link.forgedAck = ack.cumulative
        case (.trailerUnchecked?, _) where link.key != nil && !sealed:
            return up(seal(packet, link.key!, from: .client), link: link)
        case (.acceptsStale?, _), (.keepsSilentPeers?, _):
            if let key = link.key, sealed, packet.message.type.delivery == .unreliable {
                link.upNumber &+= 1
                return up(seal(Packet(number: link.upNumber, packet.message), key, from: .client), link: link)
            }
        default:
            break
        }
        up(bytes, link: link)
    }

    private func link(for client: SocketAddress) -> Link {
        if let link = links[client] { return link }
        let link = Link()
        links[client] = link
        DatagramBootstrap(group: loop)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        Reader { [self] envelope in
                            fromServer(envelope.data, client: client)
                        })
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .flatMap { channel in channel.connect(to: self.server).map { channel } }
            .whenSuccess { channel in
                link.upstream = channel
                for bytes in link.waiting { self.write(bytes, on: channel) }
                link.waiting = []
            }
        return link
    }

    private func up(_ bytes: [UInt8], link: Link) {
        guard let channel = link.upstream else { return link.waiting.append(bytes) }
        write(bytes, on: channel)
    }

    private func write(_ bytes: [UInt8], on channel: any Channel) {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        channel.writeAndFlush(buffer, promise: nil)
    }

    func keepAlive() {
        for link in links.values {
            guard let key = link.key else { continue }
            link.upNumber &+= 1
            let ping = Packet(number: link.upNumber, .ping(Ping(player: 0, count: 0xFEED, sendTime: 0)))
            up(seal(ping, key, from: .client), link: link)
        }
    }

    // MARK: Server to client

    func fromServer(_ buffer: ByteBuffer, client: SocketAddress) {
        guard !dead, let link = links[client] else { return }
        let bytes = Array(buffer.readableBytesView)
        if link.key == nil, let welcome = Self.welcome(in: bytes) {
            link.key = welcome.sessionKey
            link.seat = welcome.seat
        }
        guard let (packet, sealed) = Self.decode(bytes, key: link.key, from: .server) else {
            return down(bytes, to: client)
        }
        if case .challenge(let challenge) = packet.message {
            switch fault {
            case .numberedChallenge?:
                var numbered = bytes
                numbered[7] = 1
                return down(numbered, to: client)
            case .paddedChallenge?:
                return down(bytes + [UInt8](repeating: 0, count: 60), to: client)
            case .seatsWithoutCookie? where link.autoCookie != nil:
                var hello = link.autoCookie!
                link.autoCookie = nil
                hello.cookie = challenge.cookie
                return up(try! Packet(.hello(hello)).encoded(), link: link)
            default:
                return down(bytes, to: client)
            }
        }
        if !sealed, case .reject = packet.message,
            case .replace(let message)? = fault?.rewrite(packet.message, seat: link.seat, snapshots: &link.snapshots)
        {
            return down(try! Packet(message).encoded(), to: client)
        }
        guard sealed, let key = link.key else { return down(bytes, to: client) }
        var changed = packet
        switch (fault, packet.message) {
        case (.noResends?, .chat):
            guard link.seenReliable.insert(packet.number).inserted else { return }
            return down(bytes, to: client)
        case (.trustsUnsentAck?, _) where packet.message.type.delivery == .reliable:
            let resend = !link.seenReliable.insert(packet.number).inserted
            if resend, let forged = link.forgedAck, packet.number <= forged { return }
            return down(bytes, to: client)
        case (.steadyResends?, _) where packet.message.type.delivery == .reliable:
            if !link.seenReliable.insert(packet.number).inserted {
                loop.scheduleTask(in: .milliseconds(10)) { self.down(bytes, to: client) }
            }
            return down(bytes, to: client)
        case (.acksForClients?, _) where packet.message.type.delivery == .reliable:
            link.seenReliable.insert(packet.number)
            let ack = Ack(cumulative: link.seenReliable.max() ?? packet.number, bitfield: 0)
            up(seal(Packet(.ack(ack)), key, from: .client), link: link)
            return down(bytes, to: client)
        case (.frozenNumbering?, _) where packet.message.type.delivery == .unreliable:
            changed.number = 7
            return down(seal(changed, key, from: .server), to: client)
        default:
            break
        }
        switch fault?.rewrite(packet.message, seat: link.seat, snapshots: &link.snapshots) ?? .pass {
        case .pass:
            down(bytes, to: client)
        case .drop:
            return
        case .replace(let message):
            changed.message = message
            down(seal(changed, key, from: .server), to: client)
        case .delay(let amount):
            loop.scheduleTask(in: amount) { self.down(bytes, to: client) }
        }
    }

    func down(_ bytes: [UInt8], to client: SocketAddress) {
        guard let front else { return }
        var buffer = front.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        front.writeAndFlush(AddressedEnvelope(remoteAddress: client, data: buffer), promise: nil)
    }

    // MARK: Bytes

    private func seal(_ packet: Packet, _ key: SessionKey, from role: Role) -> [UInt8] {
        let body = try! packet.encoded()
        var bytes = body + [UInt8](repeating: 0, count: SessionKey.trailerSize)
        bytes.withUnsafeMutableBytes { _ = key.seal($0, length: body.count, from: role) }
        return bytes
    }

    /// A packet and whether it came sealed with `key`; a datagram whose trailer is wrong decodes without it.
    static func decode(_ bytes: [UInt8], key: SessionKey?, from role: Role) -> (Packet, Bool)? {
        bytes.withUnsafeBytes { raw -> (Packet, Bool)? in
            if let key, let body = key.open(raw, from: role),
                let packet = try? Packet.decode(body, maxSize: WireLimits.maxDatagram)
            {
                return (packet, true)
            }
            if let packet = try? Packet.decode(raw, maxSize: WireLimits.maxDatagram) { return (packet, false) }
            guard raw.count > SessionKey.trailerSize else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - SessionKey.trailerSize)])
            guard let packet = try? Packet.decode(body, maxSize: WireLimits.maxDatagram) else { return nil }
            if case .welcome(let welcome) = packet.message, welcome.sessionKey.open(raw, from: role) != nil {
                return (packet, true)
            }
            return (packet, false)
        }
    }

    static func welcome(in bytes: [UInt8]) -> Welcome? {
        guard bytes.count > SessionKey.trailerSize else { return nil }
        let body = Array(bytes.dropLast(SessionKey.trailerSize))
        guard case .welcome(let welcome)? = (try? Packet.decode(body, maxSize: WireLimits.maxDatagram))?.message,
            bytes.withUnsafeBytes({ welcome.sessionKey.open($0, from: .server) != nil })
        else { return nil }
        return welcome
    }
}

/// Hands each datagram read to a closure, on the channel's loop.
private final class Reader: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: the closure runs only on the proxy's one loop.
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let body: (AddressedEnvelope<ByteBuffer>) -> Void
    init(_ body: @escaping (AddressedEnvelope<ByteBuffer>) -> Void) { self.body = body }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { body(unwrapInboundIn(data)) }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {}
}
