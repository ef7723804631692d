import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishWire

/// A UDP peer on 127.0.0.1 that answers a client's cookie handshake and then echoes it, with a ``ReliableEndpoint``
/// per client: every reliable Chat is logged in delivery order and sent back reliably, every Ping is answered.
///
/// It is the far end an ``AsyncClientSession`` needs to be tested on real sockets without the game server: it knows no
/// game. Once ``mute()`` is called it never sends again, which is what a peer that went away looks like to the client.
final class EchoPeer: Sendable {
    let address: SocketAddress
    let channel: any Channel
    private let state: NIOLoopBound<State>
    private let timer: RepeatedTask

    /// Per-client reliability and what the client's reliable Chats carried, in delivery order.
    final class State {
        struct Client {
            var endpoint: ReliableEndpoint
            /// The session key of the Welcome: later datagrams both ways carry its trailer, as with the real server.
            var key: SessionKey
            var chats: [String] = []
        }

        var clients: [SocketAddress: Client] = [:]
        var muted = false
        var welcomesSent = 0
        let cookie = Cookie(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210)
    }

    private init(address: SocketAddress, channel: any Channel, state: NIOLoopBound<State>, timer: RepeatedTask) {
        self.address = address
        self.channel = channel
        self.state = state
        self.timer = timer
    }

    static func start(on loop: any EventLoop) async throws -> EchoPeer {
        let state = try await loop.submit { NIOLoopBound(State(), eventLoop: loop) }.get()
        let channel = try await DatagramBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        // The endpoints' timers (resends, acks, keepalives) run every 5 ms: a coarse clock is enough for a test peer.
        let timer = loop.scheduleRepeatedTask(initialDelay: .milliseconds(5), delay: .milliseconds(5)) { _ in
            Handler.runTimers(state: state.value, channel: channel, now: .now())
        }
        guard let address = channel.localAddress else { throw ChannelError.unknownLocalAddress }
        return EchoPeer(address: address, channel: channel, state: state, timer: timer)
    }

    /// The target a client session connects to.
    var target: Target { Target(transport: .udp, host: "127.0.0.1", port: address.port ?? 0) }

    /// Stops answering anything, from now on.
    func mute() async throws {
        try await channel.eventLoop.submit { [state] in state.value.muted = true }.get()
    }

    /// The reliable Chats each client delivered, in order, and the peer's endpoint counters for it.
    func clients() async throws -> [(chats: [String], stats: EndpointStats)] {
        try await channel.eventLoop.submit { [state] in
            state.value.clients.values.map { ($0.chats, $0.endpoint.stats) }
        }.get()
    }

    func close() async {
        timer.cancel()
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>

        private let state: NIOLoopBound<State>

        init(state: NIOLoopBound<State>) {
            self.state = state
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            let state = state.value
            guard !state.muted else { return }
            let now = NIODeadline.now()
            let from = envelope.remoteAddress
            let key = state.clients[from]?.key
            guard
                let packet = envelope.data.withUnsafeReadableBytes({ bytes -> Packet? in
                    if let key, let body = key.open(bytes, from: .client) {
                        return try? Packet.decode(body, maxSize: WireLimits.maxDatagram)
                    }
                    guard let bare = try? Packet.decode(bytes, maxSize: WireLimits.maxDatagram) else { return nil }
                    if case .hello = bare.message { return bare }
                    return nil
                })
            else { return }
            if case .hello(let hello) = packet.message {
                guard hello.cookie == state.cookie else {
                    return Self.write(
                        Packet(.challenge(Challenge(cookie: state.cookie))), to: from, on: context.channel)
                }
                guard state.clients[from] == nil else { return } // a resent Hello: the endpoint resends Welcome
                var endpoint = ReliableEndpoint(now: now)
                state.welcomesSent += 1
                let key = SessionKey.random()
                let welcome = Welcome(
                    peer: UInt32(state.welcomesSent), match: 1, seat: 0, tickRate: 60, resumeToken: 42, sessionKey: key)
                if let stamped = try? endpoint.stamp(.welcome(welcome), now: now) {
                    Self.write(stamped, to: from, key: key, on: context.channel)
                }
                state.clients[from] = State.Client(endpoint: endpoint, key: key)
                return
            }
            guard var client = state.clients.removeValue(forKey: from) else { return }
            var replies: [Message] = []
            _ = client.endpoint.receive(packet, now: now) { message in
                switch message {
                case .chat(let chat):
                    client.chats.append(chat.text)
                    replies.append(message)
                case .ping(let ping):
                    replies.append(.pong(ping))
                default:
                    break
                }
            }
            for reply in replies {
                if let stamped = try? client.endpoint.stamp(reply, now: now) {
                    Self.write(stamped, to: from, key: client.key, on: context.channel)
                }
            }
            // Acknowledge at once, as the client session does, so round trips are not inflated by the timer.
            if client.endpoint.owesAck {
                _ = client.endpoint.poll(now: now) { [key = client.key] in
                    Self.write($0, to: from, key: key, on: context.channel)
                }
            }
            state.clients[from] = client
        }

        static func runTimers(state: State, channel: any Channel, now: NIODeadline) {
            guard !state.muted else { return }
            for address in Array(state.clients.keys) {
                guard var client = state.clients[address], client.endpoint.nextDeadline <= now else { continue }
                _ = client.endpoint.poll(now: now) { [key = client.key] in write($0, to: address, key: key, on: channel)
                }
                state.clients[address] = client
            }
        }

        static func write(
            _ packet: Packet, to address: SocketAddress, key: SessionKey? = nil, on channel: any Channel
        ) {
            guard var bytes = try? packet.encoded() else { return }
            if let key {
                bytes += withUnsafeBytes(of: bytes.withUnsafeBytes { key.mac($0, from: .server) }.bigEndian) {
                    Array($0)
                }
            }
            channel.writeAndFlush(
                AddressedEnvelope(remoteAddress: address, data: ByteBuffer(bytes: bytes)), promise: nil)
        }
    }
}
