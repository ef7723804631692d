import NIOCore
import NIOPosix
import SkirmishWire

/// A connection to a game server, in the spirit of GameKit's session helper: connect with the cookie handshake,
/// follow the connection's state, send with the message's delivery class, receive messages, resume after a drop,
/// disconnect.
///
/// Loop-confined and cheap: a swarm keeps thousands per event loop, each with its own socket. Create and use it only
/// on its `eventLoop`. Its timers (Hello resends, reliable resends, acks, keepalives, timeouts) run either on their
/// own (`selfTimed`) or when the owner calls ``tick(now:)`` at ``nextDeadline`` — the swarm does the latter so ten
/// thousand sessions do not each keep a timer.
public final class ClientSession {
    public struct Configuration: Sendable {
        public var target: Target
        public var game: GameKind
        public var seats: UInt8
        /// A match to join (0: any).
        public var match: UInt32 = 0
        public var name: String
        public var link: LinkProfile = .perfect
        /// Seeds link emulation.
        public var seed: UInt64
        public var reliability = ReliableEndpoint.Configuration()
        /// A handshake not finished in this time fails.
        public var handshakeTimeout: TimeAmount = .seconds(5)
        /// Hello is resent this often over UDP until answered.
        public var helloInterval: TimeAmount = .milliseconds(500)
        /// Whether the session runs its own timers (`false`: the owner calls ``tick(now:)``).
        public var selfTimed = true
        /// The target's address, resolved once by the owner (a swarm opens thousands of sessions to one server);
        /// `nil`: each session resolves `target.host` itself.
        public var resolvedAddress: SocketAddress?
        /// Where a UDP socket takes its local port (`nil`: the kernel picks one). A swarm shares one pool among all
        /// its bots, so no bot inherits a port another just closed (see ``LocalPortPool``).
        public var localPorts: LocalPortPool?

        public init(target: Target, game: GameKind, seats: UInt8, name: String, seed: UInt64 = 1) {
            self.target = target
            self.game = game
            self.seats = seats
            self.name = name
            self.seed = seed
        }
    }

    /// Why a session ended.
    public enum Cause: Sendable, Hashable, CustomStringConvertible {
        case rejected(RejectReason)
        case remote(DisconnectReason)
        case silence
        case unacknowledged
        case handshakeTimeout
        case local
        case transportError(String)

        public var description: String {
            switch self {
            case .rejected(let reason): "rejected: \(reason)"
            case .remote(let reason): "disconnected by the server: \(reason)"
            case .silence: "the server went silent"
            case .unacknowledged: "reliable messages went unacknowledged"
            case .handshakeTimeout: "the handshake timed out"
            case .local: "closed by this side"
            case .transportError(let text): "transport error: \(text)"
            }
        }
    }

    public enum State: Sendable, Hashable {
        case idle
        case connecting
        case connected(Welcome)
        case disconnected(Cause)
    }

    public let configuration: Configuration
    public let eventLoop: any EventLoop
    public private(set) var state = State.idle
    /// Per-packet hooks for metrics.
    public var observer: (any SessionObserver)?

    private let onEvent: (SessionEvent) -> Void
    private var endpoint: ReliableEndpoint
    private var channel: (any Channel)?
    private var channelGeneration = 0
    private var remote: SocketAddress?
    private var cookie = Cookie.zero
    private var resumeToken: UInt64 = 0
    private var handshakeStarted = NIODeadline.distantFuture
    private var nextHello = NIODeadline.distantFuture
    private var suspended = false
    /// A resume's handshake is in flight: the seat's numbered stream goes on underneath it.
    private var resuming = false
    /// The pool port the current UDP socket is bound to, returned to the pool when the socket closes.
    private var localPort: Int?
    private var bindRetries = 0
    private var outbound: LinkEmulator?
    private var inbound: LinkEmulator?
    private var streamReadyAt = NIODeadline.uptimeNanoseconds(0)
    private var timer: Scheduled<Void>?
    private var inbox: [Message] = []
    private var sendBuffer: ByteBuffer?
    private var timerDue = NIODeadline.distantFuture

    public init(
        configuration: Configuration, eventLoop: any EventLoop, onEvent: @escaping (SessionEvent) -> Void
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.onEvent = onEvent
        var reliability = configuration.reliability
        reliability.mode = configuration.target.transport == .udp ? .datagram : .stream
        endpoint = ReliableEndpoint(configuration: reliability, now: .now())
        if !configuration.link.isPerfect {
            outbound = LinkEmulator(profile: configuration.link, seed: configuration.seed)
            inbound = LinkEmulator(profile: configuration.link, seed: configuration.seed ^ 0x5EED_1111)
        }
    }

    /// The endpoint's counters: resends, loss, duplicates, smoothed RTT.
    public var stats: EndpointStats { endpoint.stats }

    /// When ``tick(now:)`` next has something to do.
    public var nextDeadline: NIODeadline {
        switch state {
        case .connecting: min(nextHello, handshakeStarted + configuration.handshakeTimeout)
        case .connected: suspended ? .distantFuture : endpoint.nextDeadline
        case .idle, .disconnected: .distantFuture
        }
    }

    // MARK: Connecting

    /// Opens the socket and starts the handshake.
    public func connect() {
        guard case .idle = state else { return }
        state = .connecting
        onEvent(.stateChanged(.connecting))
        openChannel()
    }

    /// Reconnects after a drop with the Welcome's resume token, keeping the reliable numbering, so the server can
    /// put this player back in its seat and resend what was not acknowledged.
    public func resume() {
        guard resumeToken != 0 else { return }
        switch state {
        case .connected, .disconnected: break
        case .idle, .connecting: return
        }
        closeChannel()
        suspended = false
        resuming = true
        cookie = .zero
        state = .connecting
        openChannel()
    }

    /// Drops the socket without a goodbye (the player's phone changed networks); ``resume()`` comes back.
    public func suspend() {
        suspended = true
        closeChannel()
        rearm()
    }

    /// Says goodbye and closes. Silent: no state event follows, the caller knows.
    public func disconnect(reason: DisconnectReason) {
        if case .connected = state, !suspended {
            transmit(Packet(number: 0, .disconnect(Disconnect(reason: reason))))
        }
        state = .disconnected(.local)
        closeChannel()
        timer?.cancel()
        timer = nil
    }

    private func openChannel() {
        let now = NIODeadline.now()
        handshakeStarted = now
        nextHello = .distantFuture
        channelGeneration += 1
        let generation = channelGeneration
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let future: EventLoopFuture<any Channel>
        let target = configuration.target
        switch target.transport {
        case .udp:
            // A connected socket: the kernel keeps the route instead of looking it up per datagram, drops datagrams
            // from any other address before they are read, and writes need no address.
            let address: SocketAddress
            do {
                address =
                    try remote ?? configuration.resolvedAddress
                    ?? SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
            } catch {
                return fail(.transportError("cannot resolve \(target.host): \(error)"))
            }
            remote = address
            let bootstrap = DatagramBootstrap(group: eventLoop)
                // One datagram per readable event: a bot's socket rarely holds two, and reading until EAGAIN would
                // cost a second recvmsg per packet (epoll is level-triggered, so nothing waits unread).
                .channelOption(.maxMessagesPerRead, value: 1)
                // NIO keeps one receive buffer per channel; 2 KiB each is 38 MiB at 19,000 bots. One byte over the
                // largest datagram is enough to tell an oversized one (decoded as `tooLarge`) from a legal one.
                .channelOption(
                    .recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: WireLimits.maxDatagram + 1)
                )
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            DatagramSessionHandler(session: bound, generation: generation)
                        )
                    }
                }
            if let pool = configuration.localPorts, let port = pool.take(now: now) {
                localPort = port
                // Bound to the pool's port, then connected; a port some other program holds is skipped for another.
                future = bootstrap.bind(host: address.protocol == .inet6 ? "::" : "0.0.0.0", port: port)
                    .flatMap { channel in
                        // A failed connect must not leave the bound socket (and its port) behind.
                        channel.connect(to: address).map { channel }.flatMapErrorThrowing { error in
                            channel.close(promise: nil)
                            throw error
                        }
                    }
            } else {
                future = bootstrap.connect(to: address)
            }
        case .tcp:
            future = ClientBootstrap(group: eventLoop)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(configuration.handshakeTimeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ByteToMessageHandler(PacketFrameCodec.FrameSlicing()))
                        try channel.pipeline.syncOperations.addHandler(
                            StreamSessionHandler(session: bound, generation: generation))
                    }
                }
                .connect(host: target.host, port: target.port)
        case .webSocket:
            future = ClientBootstrap(group: eventLoop)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(configuration.handshakeTimeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try WebSocketClientSetup.configure(
                            channel, target: target, session: bound, generation: generation)
                    }
                }
                .connect(host: target.host, port: target.port)
        }
        future.assumeIsolated().whenComplete { result in
            guard generation == self.channelGeneration else {
                if case .success(let channel) = result { channel.close(promise: nil) }
                return
            }
            switch result {
            case .success(let channel):
                self.channel = channel
                if target.transport != .webSocket { self.sendHello(now: .now()) }
            // WebSocket: the Hello goes out once the upgrade completes (``webSocketReady``).
            case .failure(let error):
                if let port = self.localPort, self.bindRetries < 8 {
                    // Another program holds that port: let it rest and bind another.
                    self.bindRetries += 1
                    self.localPort = nil
                    self.configuration.localPorts?.giveBack(port, now: .now())
                    return self.openChannel()
                }
                self.fail(.transportError("\(error)"))
            }
            self.bindRetries = 0
            self.rearm()
        }
        rearm()
    }

    func webSocketReady(generation: Int) {
        guard generation == channelGeneration else { return }
        sendHello(now: .now())
        rearm()
    }

    private func sendHello(now: NIODeadline) {
        let hello = Hello(
            version: Hello.currentVersion, game: configuration.game, seats: configuration.seats,
            match: configuration.match, cookie: cookie, resumeToken: resumeToken,
            name: String(configuration.name.utf8.prefix(WireLimits.maxName)) ?? "bot")
        transmit(Packet(number: 0, .hello(hello)))
        nextHello = configuration.target.transport == .udp ? now + configuration.helloInterval : .distantFuture
    }

    private func fail(_ cause: Cause) {
        if case .disconnected = state { return }
        state = .disconnected(cause)
        closeChannel()
        timer?.cancel()
        timer = nil
        onEvent(.stateChanged(state))
    }

    private func closeChannel() {
        channelGeneration += 1
        channel?.close(promise: nil)
        channel = nil
        if let port = localPort {
            localPort = nil
            configuration.localPorts?.giveBack(port, now: .now())
        }
    }

    // MARK: Sending

    /// Sends a message with its type's delivery class; dropped (and reported) when there is no seat.
    ///
    /// While the seat is being resumed (suspended, or a resume's handshake in flight) a reliable message is numbered
    /// at once and sent by the endpoint's resend timer once the Welcome is back — the server would refuse it from
    /// the new address before then; an unreliable one would be stale by then and is skipped.
    public func send(_ message: Message) {
        let live: Bool
        switch state {
        case .connected:
            live = !suspended
        case .connecting where resuming:
            live = false
        case .idle, .connecting, .disconnected:
            observer?.dropped("send_while_disconnected")
            return
        }
        if !live, message.type.delivery != .reliable { return }
        let packet: Packet
        do throws(EndpointError) {
            packet = try endpoint.stamp(message, now: .now())
        } catch {
            return fail(.unacknowledged)
        }
        guard live else { return }
        transmit(packet)
        if configuration.selfTimed { rearm() }
    }

    /// Sends bytes exactly as given (rogue traffic); counted as sent.
    public func sendRaw(_ bytes: [UInt8]) {
        guard channel != nil, !suspended else { return }
        observer?.sentRaw(bytes: bytes.count)
        write(bytes: bytes)
    }

    private func transmit(_ packet: Packet) {
        guard let channel else { return }
        // The session's own buffer, reused: NIO is done with it once a datagram write returns, so `clear()` finds it
        // uniquely owned and nothing is allocated per packet. (A write still pending, or one the link emulator holds,
        // keeps its copy; the next `clear()` then allocates a fresh buffer and the held one is untouched.)
        var buffer = sendBuffer ?? channel.allocator.buffer(capacity: 128)
        sendBuffer = nil
        buffer.clear()
        let framed = configuration.target.transport == .tcp
        if framed { buffer.writeInteger(UInt32(0)) }
        let size: Int
        do {
            size = try Self.encode(packet, into: &buffer)
        } catch {
            observer?.dropped("encode_failed")
            return
        }
        if framed { buffer.setInteger(UInt32(size), at: buffer.readerIndex) }
        observer?.sent(packet.message.type, bytes: size)
        defer { sendBuffer = buffer }
        guard var link = outbound else { return write(buffer, framed: framed, to: channel) }
        let fate = link.fate()
        outbound = link
        for delay in [fate.first, fate.second].compactMap({ $0 }) {
            let generation = channelGeneration
            eventLoop.assumeIsolated().scheduleTask(in: delay) { [self, buffer] in
                if generation == channelGeneration { write(buffer, framed: framed) }
            }
        }
    }

    /// Encodes `packet` after the buffer's writer index, growing the buffer only when the packet needs more room
    /// than it has (a long chat over TCP); returns the packet's size.
    private static func encode(_ packet: Packet, into buffer: inout ByteBuffer) throws -> Int {
        do {
            return try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 128) { raw in
                try packet.encode(into: raw)
            }
        } catch EncodeError.bufferTooSmall(let needed) where needed <= WireLimits.maxFrame {
            return try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: needed) { raw in
                try packet.encode(into: raw)
            }
        }
    }

    private func write(bytes: [UInt8]) {
        guard let channel else { return }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        write(buffer)
    }

    /// Writes one packet's bytes; `framed`: a TCP payload already carries its length prefix.
    private func write(_ payload: ByteBuffer, framed: Bool = false) {
        guard let channel else { return }
        write(payload, framed: framed, to: channel)
    }

    private func write(_ payload: ByteBuffer, framed: Bool, to channel: any Channel) {
        switch configuration.target.transport {
        case .udp:
            channel.writeAndFlush(payload, promise: nil)
        case .tcp where framed:
            channel.writeAndFlush(payload, promise: nil)
        case .tcp:
            var framed = channel.allocator.buffer(capacity: payload.readableBytes + 4)
            framed.writeInteger(UInt32(payload.readableBytes))
            framed.writeImmutableBuffer(payload)
            channel.writeAndFlush(framed, promise: nil)
        case .webSocket:
            channel.writeAndFlush(WebSocketClientSetup.binaryFrame(payload), promise: nil)
        }
    }

    // MARK: Receiving

    /// Bytes of one packet from the transport (a datagram, a TCP frame body or a WebSocket message).
    func received(_ bytes: ByteBuffer, from address: SocketAddress?, generation: Int) {
        // No check of `address`: a connected UDP socket only ever reads datagrams from its peer.
        guard generation == channelGeneration else { return }
        guard var link = inbound else { return process(bytes) }
        let fate = link.fate()
        inbound = link
        for delay in [fate.first, fate.second].compactMap({ $0 }) {
            eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
                if generation == channelGeneration { process(bytes) }
            }
        }
    }

    func transportFailed(_ error: any Error, generation: Int) {
        guard generation == channelGeneration else { return }
        if let frame = error as? FrameError { return fail(.transportError("\(frame)")) }
        if error is DecodeError { return }
        // ICMP port unreachable on UDP (ECONNREFUSED: the server is not there yet, or restarted) reaches a connected
        // socket as a read error, which NIO reports without closing: the handshake keeps trying.
        if configuration.target.transport == .udp { return }
        fail(.transportError("\(error)"))
    }

    func transportClosed(generation: Int) {
        guard generation == channelGeneration, !suspended else { return }
        switch state {
        case .connecting, .connected:
            fail(
                .transportError(
                    configuration.target.transport == .udp
                        ? "the socket closed after an error (is the server listening on that port?)"
                        : "the server closed the connection"))
        case .idle, .disconnected: break
        }
    }

    private func process(_ bytes: ByteBuffer) {
        let now = NIODeadline.now()
        let limit = configuration.target.transport == .udp ? WireLimits.maxDatagram : WireLimits.maxFrame
        let result = bytes.withUnsafeReadableBytes { raw in
            Result { () throws(DecodeError) in try Packet.decode(raw, maxSize: limit) }
        }
        let packet: Packet
        switch result {
        case .success(let decoded): packet = decoded
        case .failure(let error): return observer?.dropped("decode_\(error.label)") ?? ()
        }
        observer?.received(packet.message.type, bytes: bytes.readableBytes)
        switch packet.message {
        case .challenge(let challenge):
            guard case .connecting = state else { return }
            cookie = challenge.cookie
            sendHello(now: now)
        case .reject(let reject):
            fail(.rejected(reject.reason))
        case .disconnect(let disconnect):
            fail(.remote(disconnect.reason))
        default:
            let lostBefore = endpoint.stats.lost
            // Delivered after `receive` returns: handling a message may send (a Pong, a bot's reply), which stamps
            // on the same endpoint.
            // Taken out of `inbox` first so the array is uniquely owned and `removeAll` keeps its storage.
            var delivered = inbox
            inbox = []
            delivered.removeAll(keepingCapacity: true)
            _ = endpoint.receive(packet, now: now) { delivered.append($0) }
            for message in delivered {
                // The owner may close the session while it handles one of them (a resumed stream's PuckMatchOver
                // ends the match): what the same packet still released belongs to no session any more.
                if case .disconnected = state { break }
                deliver(message, now: now)
            }
            inbox = delivered
            let lost = endpoint.stats.lost &- lostBefore
            if lost > 0 { observer?.lost(Int(lost)) }
            if endpoint.owesAck, case .connected = state { runTimers(now: now) }
        }
        rearm()
    }

    private func deliver(_ message: Message, now: NIODeadline) {
        switch message {
        case .welcome(let welcome):
            resumeToken = welcome.resumeToken
            if resuming { endpoint.reattached(now: now) }
            resuming = false
            nextHello = .distantFuture
            state = .connected(welcome)
            onEvent(.stateChanged(state))
        case .ping(let ping):
            if let pong = try? endpoint.stamp(.pong(ping), now: now) { transmit(pong) }
        case .pong(let pong):
            let rtt = Double(now.uptimeNanoseconds) / 1e9 - pong.sendTime
            if rtt >= 0, rtt < 60 { onEvent(.rtt(.nanoseconds(Int64(rtt * 1e9)))) }
        default:
            // While a resume's handshake is in flight, the server resends what the old connection missed: those
            // messages carry the seat's reliable numbers from before the Welcome, and dropping them would lose a
            // goal or a card for good.
            switch state {
            case .connected: break
            case .connecting where resuming: break
            case .idle, .connecting, .disconnected: return
            }
            onEvent(.message(message, receivedAt: now))
        }
    }

    // MARK: Timers

    /// Runs the session's timers; call at ``nextDeadline`` when `selfTimed` is false.
    public func tick(now: NIODeadline) {
        runTimers(now: now)
    }

    private func runTimers(now: NIODeadline) {
        switch state {
        case .connecting:
            if now - handshakeStarted >= configuration.handshakeTimeout { return fail(.handshakeTimeout) }
            if now >= nextHello { sendHello(now: now) }
        case .connected:
            guard !suspended else { return }
            let resendsBefore = endpoint.stats.resends
            let status = endpoint.poll(now: now) { packet in self.transmit(packet) }
            let resent = endpoint.stats.resends &- resendsBefore
            if resent > 0 { observer?.resent(Int(resent)) }
            switch status {
            case .alive: break
            case .timedOut(.silence): fail(.silence)
            case .timedOut(.unacknowledged): fail(.unacknowledged)
            }
        case .idle, .disconnected:
            break
        }
    }

    private func rearm() {
        guard configuration.selfTimed else { return }
        let due = nextDeadline
        guard due != .distantFuture else {
            timer?.cancel()
            timer = nil
            timerDue = .distantFuture
            return
        }
        if timer != nil, timerDue <= due { return }
        timer?.cancel()
        timerDue = due
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            timer = nil
            timerDue = .distantFuture
            runTimers(now: .now())
            rearm()
        }
    }
}

/// What a session tells its owner.
public enum SessionEvent: Sendable {
    case stateChanged(ClientSession.State)
    case message(Message, receivedAt: NIODeadline)
    /// A round trip measured from a Pong to one of this side's Pings.
    case rtt(TimeAmount)
}

/// Per-packet hooks, for metrics; called on the session's loop.
public protocol SessionObserver: AnyObject {
    func sent(_ type: MessageType, bytes: Int)
    func sentRaw(bytes: Int)
    func received(_ type: MessageType, bytes: Int)
    func resent(_ count: Int)
    func lost(_ count: Int)
    func dropped(_ reason: String)
}
