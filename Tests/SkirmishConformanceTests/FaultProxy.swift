import NIOCore
import NIOPosix
import SkirmishWire
import Testing

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
        case .acceptsStale: "dropped, saw its input step"
        case .unmirrored: "to see B's paddle at"
        case .paddleEscapes: "own half, on the table"
        case .wrongHash: "reproduce their state hash"
        case .refusesResume: "a Welcome answering the resume"
        case .dropsPings: "Pings in 3.5 s to an idle peer"
        case .keepsSilentPeers: "the silent peer was kept"
        case .diesOnGarbage: "to stay seated and keep playing"
        case .dropsWelcomes: "a Welcome or Reject(4 bad request) to a Hello for each of puck, snap and suns"
        }
    }

    var testDescription: String { "\(rawValue) fails \(check)" }
}

/// A UDP proxy in front of the real server that breaks one rule of the protocol (a ``Fault``), or none.
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

    static func start(fault: Fault?, server: SocketAddress) async throws -> FaultProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let relay = Relay(fault: fault, server: server, loop: loop)
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
    }

    let fault: Fault?
    let server: SocketAddress
    let loop: any EventLoop
    var front: (any Channel)?
    var links: [SocketAddress: Link] = [:]
    var dead = false

    init(fault: Fault?, server: SocketAddress, loop: any EventLoop) {
        self.fault = fault
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
        case (.seatsWithoutCookie?, .hello(let hello)) where hello.cookie == .zero && hello.resumeToken == 0:
            link.autoCookie = hello
        case (.refusesResume?, .hello(let hello)) where hello.resumeToken != 0:
            let reject = try! Packet(.reject(Reject(reason: .resumeExpired, text: "no"))).encoded()
            return down(reject, to: client)
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
        if link.key == nil, let welcome = Self.welcome(in: bytes) { link.key = welcome.sessionKey }
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
        guard sealed, let key = link.key else { return down(bytes, to: client) }
        var changed = packet
        switch (fault, packet.message) {
        case (.wrongTickRate?, .welcome(var welcome)):
            welcome.tickRate = 30
            changed.message = .welcome(welcome)
        case (.dropsPings?, .ping), (.dropsWelcomes?, .welcome):
            return
        case (.noResends?, .chat):
            guard link.seenReliable.insert(packet.number).inserted else { return }
        case (.frozenNumbering?, _) where packet.message.type.delivery == .unreliable:
            changed.number = 7
        case (.unmirrored?, .tableSnapshot(var snapshot)):
            snapshot.them.x = 320 - snapshot.them.x
            snapshot.them.y = 480 - snapshot.them.y
            changed.message = .tableSnapshot(snapshot)
        case (.paddleEscapes?, .tableSnapshot(var snapshot)):
            snapshot.me.y -= 200
            changed.message = .tableSnapshot(snapshot)
        case (.wrongHash?, .tableSnapshot(var snapshot)):
            snapshot.stateHash ^= 1
            changed.message = .tableSnapshot(snapshot)
        default:
            return down(bytes, to: client)
        }
        down(seal(changed, key, from: .server), to: client)
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
