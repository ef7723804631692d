import Dispatch
import NIOCore
import NIOPosix
import NIOWebSocket
import SkirmishNet
import SkirmishWire
import Synchronization

/// One connection to the server under test, for the checks that must send bytes no well-behaved client sends:
/// forged cookies, malformed and oversize packets, stale numbers, wrong session trailers, silence.
///
/// Its legitimate half is SNAP's own client, the plug-in the swarm runs (``SnapConnection``): the handshake
/// (``handshake(_:within:)``), the acks and Pongs it owes for what it is given (``receive(within:answering:where:)``),
/// the numbering and session trailer of the messages a check sends (``send(_:sealed:)`` with a `Message`) and the
/// goodbye. Only the deliberately hostile bytes bypass it: a packet given as bytes, or with a number chosen by the
/// check, goes out as given (sealed by the plug-in when asked, as a hostile *player*'s would be). Beyond that the
/// probe does nothing of its own accord: its connection is ticked only while a handshake is under way (Hello resends),
/// and datagrams read with ``receiveRaw(within:)`` or ``receive(within:)`` are not shown to the connection, so a
/// check can listen without answering. The checks that play the game use the client runtime (``Player``) instead.
/// Over UDP it is a connected datagram socket (a fresh local port each, which is what a spoofing stranger looks
/// like to the server); over TCP a length-framed stream; over WebSocket one binary message per packet.
final class RawProbe: Sendable {
    private let channel: any Channel
    private let transport: Transport
    private let inbox: Inbox
    /// The probe's SNAP connection: idle until ``handshake(_:within:)`` makes one for its Hello.
    private let connection: Mutex<SnapConnection>
    /// Whether the connection's Acks are written (``withholdAcks()`` stops them).
    private let acking = Mutex(true)
    /// When the socket read the answer that ended the last ``handshake(_:within:)`` (its Welcome or Reject).
    private let answered = Mutex<ContinuousClock.Instant?>(nil)

    private init(channel: any Channel, transport: Transport, inbox: Inbox) {
        self.channel = channel
        self.transport = transport
        self.inbox = inbox
        let idle = Self.configuration(for: Hello(game: .puck, seats: 2, name: "probe"))
        connection = Mutex(SnapConnection(configuration: idle, transport: transport))
    }

    deinit { channel.close(promise: nil) }

    /// Opens a raw connection to `target`; throws when it cannot connect (or upgrade) within `timeout`.
    static func open(_ target: Target, group: any EventLoopGroup, timeout: Duration = .seconds(5)) async throws
        -> RawProbe
    {
        let inbox = Inbox()
        let channel: any Channel
        switch target.transport {
        case .udp:
            let address = try SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
            let local = address.protocol == .inet6 ? "::" : "0.0.0.0"
            let bootstrap = DatagramBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DatagramReader(inbox: inbox))
                    }
                }
            // A port from the process's pool, as every bot's: one a probe or bot of this process closed moments ago
            // (a check before this one, against the same server) would bring the tail of that socket's stream with
            // it, and a check that counts what the server sends would count it. A pooled port some other program
            // holds is skipped for another (up to 8 tries); an exhausted pool falls back to the kernel's choice.
            var bound: (channel: any Channel, port: Int?)?
            var lastError: (any Error)?
            for _ in 0..<8 where bound == nil {
                let port = LocalPortPool.shared.take(now: .now())
                do {
                    bound = (try await bootstrap.bind(host: local, port: port ?? 0).get(), port)
                } catch {
                    lastError = error
                    if let port { LocalPortPool.shared.giveBack(port, now: .now()) } else { break }
                }
            }
            guard let bound else { throw lastError ?? ProbeError(text: "cannot bind a local UDP port") }
            channel = bound.channel
            if let port = bound.port {
                channel.closeFuture.whenComplete { _ in LocalPortPool.shared.giveBack(port, now: .now()) }
            }
            do {
                try await channel.connect(to: address).get()
            } catch {
                channel.close(promise: nil)
                throw error
            }
        case .tcp:
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(TimeAmount(timeout))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(PacketFrameCodec.FrameSlicing()))
                        try channel.pipeline.syncOperations.addHandler(FrameReader(inbox: inbox))
                    }
                }
                .connect(host: target.host, port: target.port).get()
        case .webSocket:
            let upgraded = group.next().makePromise(of: Void.self)
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(TimeAmount(timeout))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try WebSocketLinkSetup.configure(
                            channel, target: target,
                            upgraded: {
                                try $0.pipeline.syncOperations.addHandler(MessageReader(inbox: inbox))
                                upgraded.succeed()
                            },
                            failed: { upgraded.fail(ProbeError(text: $0)) })
                    }
                }
                .connect(host: target.host, port: target.port).get()
            try await upgraded.futureResult.get()
        }
        return RawProbe(channel: channel, transport: target.transport, inbox: inbox)
    }

    /// Whether the server closed the connection (streams), or the socket failed.
    var isClosed: Bool { inbox.closed }

    /// The status code of the close frame the server sent (WebSocket), if one came: 0 for a close frame without one.
    var closeCode: UInt16? { inbox.closeCode }

    /// The session key of the connection's Welcome (UDP), if it has one.
    var sessionKey: SessionKey? { connection.withLock { $0.sessionKey } }

    /// When the socket read the Welcome (or Reject) that ended the last handshake: the time to measure the server's
    /// timers from, not when the check got round to it.
    var answeredAt: ContinuousClock.Instant? { answered.withLock { $0 } }

    // MARK: Sending

    /// Sends `message` through the connection, numbered and sealed as the protocol sends it. With `sealed` false a
    /// datagram goes without its session trailer: a packet of the session that cannot prove it, which the server
    /// must ignore.
    func send(_ message: Message, sealed: Bool = true) {
        let strip = !sealed && transport == .udp
        let step = connection.withLock { connection -> Step in
            let hasKey = connection.sessionKey != nil
            var actions = ClientActions<SnapConnection>()
            connection.send(message, now: .now(), into: &actions)
            return Step(actions, stripping: strip && hasKey ? SessionKey.trailerSize : 0)
        }
        write(step.packets)
    }

    /// Sends `bytes` as one datagram, frame or message, as given: over UDP with the session trailer appended by the
    /// connection when `sealed` and it has a key; over TCP after a length prefix.
    func send(_ bytes: [UInt8], sealed: Bool = true) {
        guard sealed || transport != .udp else { return write(bytes) }
        let step = connection.withLock { connection -> Step in
            var actions = ClientActions<SnapConnection>()
            bytes.withUnsafeBytes { connection.sendRaw($0, now: .now(), into: &actions) }
            return Step(actions)
        }
        write(step.packets)
    }

    /// Encodes `packet` with the number it carries and sends it as bytes (sealed by the connection when `sealed`).
    func send(_ packet: Packet, sealed: Bool = true) {
        guard let bytes = try? packet.encoded() else { return }
        send(bytes, sealed: sealed)
    }

    /// Sends raw bytes over a TCP connection without any framing (a frame prefix announcing more than the limit).
    func sendUnframed(_ bytes: [UInt8]) { write(bytes) }

    /// Sends `bytes` as one WebSocket frame of `opcode`, masked (as a client must) or not: the frames a server must
    /// refuse. Only over WebSocket.
    func sendFrame(_ bytes: [UInt8], opcode: WebSocketOpcode, masked: Bool) {
        guard transport == .webSocket else { return }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        channel.writeAndFlush(
            WebSocketFrame(fin: true, opcode: opcode, maskKey: masked ? .random() : nil, data: buffer), promise: nil)
    }

    /// Writes `bytes` as one datagram, run of stream bytes or WebSocket message, exactly as they are.
    private func write(_ bytes: [UInt8]) {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        switch transport {
        case .udp, .tcp:
            channel.writeAndFlush(buffer, promise: nil)
        case .webSocket:
            channel.writeAndFlush(
                WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: buffer), promise: nil)
        }
    }

    private func write(_ packets: [[UInt8]]) {
        let acking = acking.withLock { $0 }
        for packet in packets where acking || !Self.isAck(packet) { write(packet) }
    }

    /// From now on the connection's Acks are dropped instead of written, the handshake's Ack of the Welcome
    /// included; everything else goes out as before (UDP: a peer that never acknowledges, `session.ack-timeout`).
    func withholdAcks() { acking.withLock { $0 = false } }

    /// Whether `bytes`, as the connection wrote them, are an `Ack`: over UDP the type (0x0005) follows the magic
    /// and the number, with the trailer after the packet. Streams never carry one.
    private static func isAck(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 10 && bytes[8] == 0x00 && bytes[9] == 0x05
    }

    // MARK: Receiving

    /// The next datagram, frame or message as it arrived (trailer included), or `nil` when none comes in time. The
    /// connection does not see it: nothing is answered.
    func receiveRaw(within limit: Duration) async -> [UInt8]? {
        await inbox.next(within: limit)
    }

    /// The next packet that decodes and `match` accepts, with the time the channel read it (not when this task got
    /// round to it); others are skipped, and nothing is answered. Packets the channel read before `after` are
    /// skipped too: an answer that was already waiting is not the answer to what was sent at `after`. `nil` when
    /// none comes in time.
    func arrival(
        within limit: Duration, after: ContinuousClock.Instant? = nil, where match: (Packet) -> Bool
    ) async -> (packet: Packet, at: ContinuousClock.Instant)? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let arrival = await inbox.arrival(within: deadline - ContinuousClock.now) else { return nil }
            if let after, arrival.at < after { continue }
            if let packet = Self.decode(arrival.bytes, transport: transport, key: sessionKey), match(packet) {
                return (packet, arrival.at)
            }
        }
        return nil
    }

    /// Like ``arrival(within:after:where:)``, sending a Ping every second while it waits: a wait for packets only the
    /// server sends (resends, say) would otherwise leave the probe silent long enough for the server's 5 s silence
    /// timeout. The Pongs are skipped like any packet `match` refuses.
    func arrivalStayingAlive(
        within limit: Duration, after: ContinuousClock.Instant? = nil, where match: (Packet) -> Bool
    ) async -> (packet: Packet, at: ContinuousClock.Instant)? {
        let deadline = ContinuousClock.now + limit
        var nextPing = ContinuousClock.now + .seconds(1)
        while true {
            let now = ContinuousClock.now
            guard now < deadline, !Task.isCancelled, !inbox.closed else { return nil }
            if now >= nextPing {
                send(.ping(Ping(player: 0, count: 0x4A11_7E00, sendTime: 0)))
                nextPing = now + .seconds(1)
            }
            if let found = await arrival(within: min(deadline, nextPing) - now, after: after, where: match) {
                return found
            }
        }
    }

    /// Sends a Ping and waits for its Pong (sending the Ping again every 250 ms): a barrier in the server's own
    /// order. A server reads a client's packets in order, so what the probe sent before the Ping was handled before
    /// the Pong left, and a packet read after the Pong was sent after that. Packets read before the Pong are
    /// skipped. Returns when the Pong was read, or `nil` when none came within `limit`.
    ///
    /// `resending` (an Ack, say) goes again before each repeated Ping: over a real link the packet the barrier is
    /// for may be lost while a later Ping arrives. It must be one that changes nothing when it comes twice.
    func barrier(within limit: Duration, resending packet: Packet? = nil) async -> ContinuousClock.Instant? {
        var count = UInt32.random(in: 0x1000_0000...0xEFFF_FFFF)
        // Never the count the keep-alive Pings of ``arrivalStayingAlive(within:after:where:)`` carry.
        if count == 0x4A11_7E00 { count += 1 }
        let deadline = ContinuousClock.now + limit
        var first = true
        while ContinuousClock.now < deadline, !Task.isCancelled, !inbox.closed {
            if !first, let packet { send(packet) }
            first = false
            send(.ping(Ping(player: 0, count: count, sendTime: 0)))
            let wait = min(deadline - ContinuousClock.now, .milliseconds(250))
            if let (_, at) = await arrival(
                within: wait,
                where: { if case .pong(let pong) = $0.message { pong.count == count } else { false } })
            {
                return at
            }
        }
        return nil
    }

    /// The next packet that decodes, with the size it arrived as; over UDP with a key, only datagrams whose trailer
    /// verifies count (others are skipped). `nil` when none comes in time. Nothing is answered.
    func receive(within limit: Duration) async -> (packet: Packet, size: Int)? {
        await receive(within: limit, answering: false)
    }

    /// Waits for a packet that `match` accepts, skipping others; `nil` when none comes in time. With `answering`,
    /// every datagram read is also given to the connection, which sends what a live client owes for it (an Ack with
    /// what it really holds, a Pong).
    func receive(within limit: Duration, answering: Bool = true, where match: (Packet) -> Bool) async -> Packet? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let (packet, _) = await receive(within: deadline - ContinuousClock.now, answering: answering) else {
                return nil
            }
            if match(packet) { return packet }
        }
        return nil
    }

    private func receive(within limit: Duration, answering: Bool) async -> (packet: Packet, size: Int)? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let bytes = await inbox.next(within: deadline - ContinuousClock.now) else { return nil }
            let packet = Self.decode(bytes, transport: transport, key: sessionKey)
            if answering { write(give(bytes).packets) }
            if let packet { return (packet, bytes.count) }
        }
        return nil
    }

    /// Hands what the channel read to the connection: a datagram or WebSocket message as it is, a TCP frame with
    /// its length prefix again (the connection frames the stream itself).
    private func give(_ bytes: [UInt8]) -> Step {
        let input = transport == .tcp ? Self.framed(bytes) : bytes
        return connection.withLock { connection -> Step in
            var actions = ClientActions<SnapConnection>()
            input.withUnsafeBytes { connection.receive($0, now: .now(), into: &actions) }
            return Step(actions)
        }
    }

    /// Decodes a datagram, frame or message; over UDP, a sealed one is opened with `key` first, and a Welcome sealed
    /// with the key it carries is accepted before any key is known.
    static func decode(_ bytes: [UInt8], transport: Transport, key: SessionKey?) -> Packet? {
        guard transport == .udp else { return try? Packet.decode(bytes, maxSize: WireLimits.maxFrame) }
        return bytes.withUnsafeBytes { raw -> Packet? in
            if let key, let body = key.open(raw, from: .server) {
                return try? Packet.decode(body, maxSize: WireLimits.maxDatagram)
            }
            if let bare = try? Packet.decode(raw, maxSize: WireLimits.maxDatagram) { return bare }
            guard raw.count > SessionKey.trailerSize else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - SessionKey.trailerSize)])
            guard let packet = try? Packet.decode(body, maxSize: WireLimits.maxDatagram),
                case .welcome(let welcome) = packet.message, welcome.sessionKey.open(raw, from: .server) != nil
            else { return nil }
            return packet
        }
    }

    // MARK: Handshake

    /// Joins through the connection: a new one asks for `hello`'s game, seats, match and name, and runs its
    /// handshake (over UDP: Hello, Challenge, Hello with the cookie, Welcome, and the Welcome's Ack), resending its
    /// Hello as a client does. Returns the server's answer to the Hello that counts (the Welcome or a Reject), or
    /// `nil` for silence.
    ///
    /// A non-zero `hello.resumeToken` is one this probe never received (a player's, replayed from elsewhere): it is
    /// written into each Hello the connection sends, the one hostile part of such a handshake.
    func handshake(_ hello: Hello, within limit: Duration = .seconds(5)) async -> Packet? {
        let deadline = ContinuousClock.now + limit
        var configuration = Self.configuration(for: hello)
        // The probe's deadline decides when to give up, not the connection's.
        configuration.handshakeTimeout = limit + .seconds(1)
        let stolen = hello.resumeToken
        let opening = connection.withLock { connection -> Step in
            connection = SnapConnection(configuration: configuration, transport: transport, name: hello.name)
            var actions = ClientActions<SnapConnection>()
            connection.start(now: .now(), into: &actions)
            return Step(actions)
        }
        write(forging(opening.packets, token: stolen))
        while ContinuousClock.now < deadline {
            let due = connection.withLock { $0.nextDeadline }
            let untilDue = Duration.nanoseconds(max(due.nanoseconds(since: .now()), 1_000_000))
            guard let arrival = await inbox.arrival(within: min(deadline - ContinuousClock.now, untilDue)) else {
                // A closed connection sends nothing more: no answer, rather than ticking until the deadline.
                if inbox.closed { return nil }
                let step = connection.withLock { connection -> Step in
                    var actions = ClientActions<SnapConnection>()
                    connection.tick(now: .now(), into: &actions)
                    return Step(actions)
                }
                write(forging(step.packets, token: stolen))
                if step.closed { return nil }
                continue
            }
            let bytes = arrival.bytes
            let packet = Self.decode(bytes, transport: transport, key: sessionKey)
            let step = give(bytes)
            write(forging(step.packets, token: stolen))
            if step.established {
                answered.withLock { $0 = arrival.at }
                return packet
            }
            if step.closed {
                guard case .reject? = packet?.message else { return nil }
                answered.withLock { $0 = arrival.at }
                return packet
            }
        }
        return nil
    }

    /// The connection's Hellos with `token` for a resume token (when it is not 0); every other packet as it is.
    private func forging(_ packets: [[UInt8]], token: UInt64) -> [[UInt8]] {
        guard token != 0 else { return packets }
        let prefix = transport == .tcp ? 4 : 0
        return packets.map { bytes in
            guard bytes.count > prefix,
                let packet = try? Packet.decode(Array(bytes[prefix...]), maxSize: WireLimits.maxFrame),
                case .hello(var hello) = packet.message
            else { return bytes }
            hello.resumeToken = token
            guard let forged = try? Packet(number: packet.number, .hello(hello)).encoded() else { return bytes }
            return prefix == 0 ? forged : Self.framed(forged)
        }
    }

    /// Leaves politely and closes the socket: the connection's goodbye (a sealed Disconnect) when it holds a seat;
    /// over a stream, where a Hello sent as bytes may have seated the probe without its connection knowing, a plain
    /// Disconnect.
    func close() {
        let goodbye = connection.withLock { connection -> Step in
            var actions = ClientActions<SnapConnection>()
            connection.close(now: .now(), into: &actions)
            return Step(actions)
        }
        if !goodbye.packets.isEmpty {
            write(goodbye.packets)
        } else if transport != .udp {
            send(Packet(.disconnect(Disconnect(reason: .quit))))
        }
        channel.close(promise: nil)
    }

    // MARK: Plumbing

    /// What one call into the connection left: its packets as bytes, and whether it was seated or closed.
    private struct Step: Sendable {
        var packets: [[UInt8]]
        var established = false
        var closed = false

        /// The packets of `actions`, each shortened by `stripping` bytes (a session trailer cut off), and its events.
        init(_ actions: ClientActions<SnapConnection>, stripping: Int = 0) {
            packets = actions.packets.map { Array($0.dropLast(stripping)) }
            for event in actions.events {
                switch event {
                case .established: established = true
                case .closed: closed = true
                case .resumed, .message: break
                }
            }
        }
    }

    /// The connection's configuration for joining with `hello`: its game, seats, match and name; no round-trip
    /// Pings of its own.
    private static func configuration(for hello: Hello) -> SnapConnection.Configuration {
        var configuration = SnapConnection.Configuration(game: hello.game, seats: hello.seats)
        configuration.match = hello.match
        configuration.name = hello.name
        configuration.pingInterval = nil
        return configuration
    }

    /// `bytes` after their u32 big-endian length: a TCP frame.
    private static func framed(_ bytes: [UInt8]) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: bytes.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + bytes
    }
}

/// What a probe's channel read, waiting to be taken by the checks, each wait with a deadline.
///
/// A check that waits is resumed once, by the datagram it waits for or by its deadline on a Dispatch timer,
/// never by polling: a suite of checks that each polled every 2 ms kept a busy machine's cooperative threads
/// waking for nothing, and its own waits then outlasted their limits (`handshake.amplification` under load).
final class Inbox: Sendable {
    /// What the channel read, and when its handler read it (before any task woke up to take it).
    typealias Arrival = (bytes: [UInt8], at: ContinuousClock.Instant)

    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Arrival?, Never>
    }

    private struct State {
        var queue: [Arrival] = []
        var closed = false
        var closeCode: UInt16?
        var waiters: [Waiter] = []
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())
    /// At most this many unread packets are kept (the oldest go): a server that floods cannot grow a probe.
    private static let capacity = 4_096

    func put(_ bytes: [UInt8]) {
        let arrival = (bytes: bytes, at: ContinuousClock.now)
        let waiter = state.withLock { state -> Waiter? in
            guard state.waiters.isEmpty else { return state.waiters.removeFirst() }
            if state.queue.count >= Self.capacity { state.queue.removeFirst() }
            state.queue.append(arrival)
            return nil
        }
        waiter?.continuation.resume(returning: arrival)
    }

    /// Marks the connection closed and ends every wait at once: nothing more will come.
    func close() {
        let waiters = state.withLock { state -> [Waiter] in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    var closed: Bool { state.withLock { $0.closed } }

    /// The status code of a WebSocket close frame that ended the connection, if one did.
    var closeCode: UInt16? { state.withLock { $0.closeCode } }

    /// Notes the status code of the close frame the server sent, then closes.
    func close(code: UInt16) {
        state.withLock { $0.closeCode = code }
        close()
    }

    /// The next packet read, at once if one waits, else the first to arrive within `limit`; `nil` after it, or when
    /// the task is cancelled.
    func next(within limit: Duration) async -> [UInt8]? { await arrival(within: limit)?.bytes }

    /// The next packet read with the time it was read, as ``next(within:)``: for a check that times the server.
    func arrival(within limit: Duration) async -> Arrival? {
        let (taken, closed) = state.withLock { ($0.queue.isEmpty ? nil : $0.queue.removeFirst(), $0.closed) }
        if let taken { return taken }
        guard limit > .zero, !closed, !Task.isCancelled else { return nil }
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let waiting = state.withLock { state -> Arrival?? in
                    // A packet that came between the first look and now is taken at once; a wait cancelled in the
                    // meantime (its handler found nothing to end) ends at once.
                    if !state.queue.isEmpty { return .some(state.queue.removeFirst()) }
                    if Task.isCancelled || state.closed { return .some(nil) }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return .none
                }
                if case .some(let arrival) = waiting { return continuation.resume(returning: arrival) }
                // A Dispatch timer, not an event loop's: a loop of a shared group that a busy process keeps busy (or
                // blocks) fired these deadlines seconds late, and a check outlasted its limit waiting on them. A wait
                // a packet ended first leaves its timer to find nothing.
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: limit.nanoseconds))) {
                    self.expire(id)
                }
            }
        } onCancel: {
            expire(id)
        }
    }

    /// Ends wait `id` with nothing, if it is still waiting.
    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: nil)
    }
}

private final class DatagramReader: ChannelInboundHandler, Sendable {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    let inbox: Inbox
    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        inbox.put(Array(envelope.data.readableBytesView))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port unreachable and the like: the datagram is gone, the socket stays usable.
    }

    func channelInactive(context: ChannelHandlerContext) { inbox.close() }
}

private final class FrameReader: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let inbox: Inbox
    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inbox.put(Array(unwrapInboundIn(data).readableBytesView))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        inbox.close()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) { inbox.close() }
}

private final class MessageReader: ChannelInboundHandler, Sendable {
    typealias InboundIn = WebSocketFrame
    let inbox: Inbox
    init(inbox: Inbox) { self.inbox = inbox }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary: inbox.put(Array(frame.unmaskedData.readableBytesView))
        case .connectionClose:
            var data = frame.unmaskedData
            inbox.close(code: data.readInteger(as: UInt16.self) ?? 0)
            context.close(promise: nil)
        default: break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        inbox.close()
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) { inbox.close() }
}

/// A probe that could not connect, with why.
struct ProbeError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}
