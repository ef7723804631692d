import NIOCore
import NIOPosix
import NIOWebSocket
import SkirmishNet
import SkirmishWire
import Synchronization

/// One raw connection to the server under test, for the checks that must send bytes no well-behaved client sends:
/// a Hello answered by hand, forged cookies, malformed and oversize packets, wrong session trailers, silence.
///
/// It is deliberately not a client: it keeps no protocol state beyond the session key it is told about, resends
/// nothing and answers nothing unless a check says so. The checks that play the game use the client runtime
/// (``AsyncClientSession``) instead. Over UDP it is a connected datagram socket (a fresh local port each, which is
/// what a spoofing stranger looks like to the server); over TCP a length-framed stream; over WebSocket one binary
/// message per packet.
final class RawProbe: Sendable {
    private let channel: any Channel
    private let transport: Transport
    private let inbox: Inbox
    /// The session key from a Welcome this probe received (UDP): what it seals and opens datagrams with.
    private let key = Mutex<SessionKey?>(nil)

    private init(channel: any Channel, transport: Transport, inbox: Inbox) {
        self.channel = channel
        self.transport = transport
        self.inbox = inbox
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
            channel = try await DatagramBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(DatagramReader(inbox: inbox))
                    }
                }
                .bind(host: local, port: 0).get()
            try await channel.connect(to: address).get()
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

    /// Adopts the key a Welcome carried: later ``send(_:sealed:)`` calls seal with it, ``receive(within:)`` opens.
    func adopt(_ sessionKey: SessionKey) { key.withLock { $0 = sessionKey } }

    /// The session key adopted, if any.
    var sessionKey: SessionKey? { key.withLock { $0 } }

    /// Sends `bytes` as one datagram, frame or message, as given; over UDP with the session trailer appended when
    /// `sealed` and a key was adopted.
    func send(_ bytes: [UInt8], sealed: Bool = true) {
        var payload = bytes
        if sealed, transport == .udp, let key = sessionKey {
            payload += [UInt8](repeating: 0, count: SessionKey.trailerSize)
            payload.withUnsafeMutableBytes { _ = key.seal($0, length: bytes.count, from: .client) }
        }
        var buffer = channel.allocator.buffer(capacity: payload.count + 4)
        switch transport {
        case .udp:
            buffer.writeBytes(payload)
            channel.writeAndFlush(buffer, promise: nil)
        case .tcp:
            buffer.writeInteger(UInt32(truncatingIfNeeded: payload.count))
            buffer.writeBytes(payload)
            channel.writeAndFlush(buffer, promise: nil)
        case .webSocket:
            buffer.writeBytes(payload)
            channel.writeAndFlush(
                WebSocketFrame(fin: true, opcode: .binary, maskKey: .random(), data: buffer), promise: nil)
        }
    }

    /// Encodes and sends `packet` (see ``send(_:sealed:)``).
    func send(_ packet: Packet, sealed: Bool = true) {
        guard let bytes = try? packet.encoded() else { return }
        send(bytes, sealed: sealed)
    }

    /// Sends raw bytes over a TCP connection without any framing (a frame prefix announcing more than the limit).
    func sendUnframed(_ bytes: [UInt8]) {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        channel.writeAndFlush(buffer, promise: nil)
    }

    /// The next datagram, frame or message as it arrived (trailer included), or `nil` when none comes in time.
    func receiveRaw(within limit: Duration) async -> [UInt8]? {
        await inbox.next(within: limit)
    }

    /// The next packet that decodes, with the size it arrived as; over UDP with a key, only datagrams whose trailer
    /// verifies count (others are skipped). `nil` when none comes in time.
    func receive(within limit: Duration) async -> (packet: Packet, size: Int)? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let bytes = await inbox.next(within: deadline - ContinuousClock.now) else { return nil }
            if let packet = Self.decode(bytes, transport: transport, key: sessionKey) {
                return (packet, bytes.count)
            }
        }
        return nil
    }

    /// Waits for a packet that `match` accepts, skipping others (acking reliable ones over UDP, as a live client
    /// would, when `ack` is set); `nil` when none comes in time.
    func receive(within limit: Duration, ack: Bool = true, where match: (Packet) -> Bool) async -> Packet? {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let (packet, _) = await receive(within: deadline - ContinuousClock.now) else { return nil }
            if ack, transport == .udp, packet.number != 0, packet.message.type.delivery == .reliable {
                send(Packet(.ack(Ack(cumulative: packet.number, bitfield: 0))))
            }
            if match(packet) { return packet }
        }
        return nil
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

    /// Runs the whole handshake by hand: Hello (over UDP: Challenge, then Hello with the cookie), and returns the
    /// server's answer to the Hello that counts (a Welcome, a Reject, or `nil` for silence). A Welcome's key is
    /// adopted and the Welcome acknowledged.
    func handshake(_ hello: Hello, within limit: Duration = .seconds(5)) async -> Packet? {
        var hello = hello
        send(Packet(.hello(hello)), sealed: false)
        let deadline = ContinuousClock.now + limit
        if transport == .udp {
            guard
                let challenge = await receive(
                    within: deadline - ContinuousClock.now,
                    where: { Self.answers($0, with: .challenge) })
            else { return nil }
            guard case .challenge(let cookie) = challenge.message else { return challenge }
            hello.cookie = cookie.cookie
            send(Packet(.hello(hello)), sealed: false)
        }
        guard
            let answer = await receive(
                within: deadline - ContinuousClock.now, ack: false,
                where: { Self.answers($0, with: .welcome) })
        else { return nil }
        if case .welcome(let welcome) = answer.message {
            if transport == .udp {
                adopt(welcome.sessionKey)
                send(Packet(.ack(Ack(cumulative: answer.number, bitfield: 0))))
            }
        }
        return answer
    }

    /// Whether `packet` answers a Hello: a packet of type `type`, or a Reject.
    private static func answers(_ packet: Packet, with type: MessageType) -> Bool {
        packet.message.type == type || packet.message.type == .reject
    }

    /// Leaves politely (a sealed Disconnect) and closes the socket.
    func close() {
        if transport != .udp || sessionKey != nil { send(Packet(.disconnect(Disconnect(reason: .quit)))) }
        channel.close(promise: nil)
    }
}

/// What a probe's channel read, waiting to be taken; polled by the checks with a deadline.
final class Inbox: Sendable {
    private struct State {
        var queue: [[UInt8]] = []
        var closed = false
    }

    private let state = Mutex(State())
    /// At most this many unread packets are kept (the oldest go): a server that floods cannot grow a probe.
    private static let capacity = 4_096

    func put(_ bytes: [UInt8]) {
        state.withLock { state in
            if state.queue.count >= Self.capacity { state.queue.removeFirst() }
            state.queue.append(bytes)
        }
    }

    func close() { state.withLock { $0.closed = true } }

    var closed: Bool { state.withLock { $0.closed } }

    func next(within limit: Duration) async -> [UInt8]? {
        let deadline = ContinuousClock.now + limit
        while true {
            let taken = state.withLock { state -> [UInt8]? in state.queue.isEmpty ? nil : state.queue.removeFirst() }
            if let taken { return taken }
            if ContinuousClock.now >= deadline || Task.isCancelled { return nil }
            try? await Task.sleep(for: .milliseconds(2))
        }
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
            inbox.close()
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
