import NIOCore
import NIOPosix
import Synchronization

/// A key-value server written for the test, on loopback, over UDP and TCP: the real implementation the swarm's
/// figures are checked against. It counts every packet and byte it received and sent by type, as its own view.
final class KeyValueServer: Sendable {
    /// The server's own counts, by packet type name.
    struct Counts: Sendable, Equatable {
        var received: [String: Int] = [:]
        var receivedBytes: [String: Int] = [:]
        var sent: [String: Int] = [:]
        var sessions = 0
    }

    let udpPort: Int
    let tcpPort: Int
    private let channels: [any Channel]
    private let state: Shared

    final class Shared: Sendable {
        private let storage = Mutex((counts: Counts(), store: [UInt16: UInt32](), sessions: UInt32(0)))

        var counts: Counts { storage.withLock { $0.counts } }

        /// Answers one packet from a client (`nil`: no answer), counting both.
        func answer(_ bytes: UnsafeRawBufferPointer, session known: UInt32?) -> (
            reply: KeyValuePacket?, session: UInt32?
        ) {
            storage.withLock { state in
                guard let packet = KeyValuePacket.decode(bytes) else {
                    state.counts.received["malformed", default: 0] += 1
                    return (nil, known)
                }
                let name = Self.name(packet.body)
                state.counts.received[name, default: 0] += 1
                state.counts.receivedBytes[name, default: 0] += bytes.count
                var reply: KeyValuePacket?
                var session = known
                switch packet.body {
                case .hello:
                    if session == nil {
                        state.sessions += 1
                        state.counts.sessions += 1
                        session = state.sessions
                    }
                    reply = KeyValuePacket(session: session!, id: 0, body: .welcome)
                case .put(let key, let value):
                    guard let session, packet.session == session else { break }
                    state.store[key] = value
                    reply = KeyValuePacket(session: session, id: packet.id, body: .value(key: key, value: value))
                case .get(let key):
                    guard let session, packet.session == session else { break }
                    reply = KeyValuePacket(
                        session: session, id: packet.id, body: .value(key: key, value: state.store[key] ?? 0))
                case .bye, .welcome, .value:
                    break
                }
                if let reply { state.counts.sent[Self.name(reply.body), default: 0] += 1 }
                return (reply, session)
            }
        }

        static func name(_ body: KeyValuePacket.Body) -> String {
            switch body {
            case .hello: "hello"
            case .welcome: "welcome"
            case .put: "put"
            case .get: "get"
            case .value: "value"
            case .bye: "bye"
            }
        }
    }

    private init(udp: any Channel, tcp: any Channel, state: Shared) {
        self.channels = [udp, tcp]
        udpPort = udp.localAddress?.port ?? 0
        tcpPort = tcp.localAddress?.port ?? 0
        self.state = state
    }

    static func start(on group: any EventLoopGroup) async throws -> KeyValueServer {
        let state = Shared()
        let udp = try await DatagramBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(DatagramHandler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let tcp = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StreamHandler(state: state))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return KeyValueServer(udp: udp, tcp: tcp, state: state)
    }

    var counts: Counts { state.counts }

    func close() async {
        for channel in channels { try? await channel.close() }
    }

    /// UDP: a session per client address.
    private final class DatagramHandler: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        typealias OutboundOut = AddressedEnvelope<ByteBuffer>
        let state: Shared
        var sessions: [SocketAddress: UInt32] = [:]

        init(state: Shared) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            let (reply, session) = envelope.data.withUnsafeReadableBytes {
                state.answer($0, session: sessions[envelope.remoteAddress])
            }
            sessions[envelope.remoteAddress] = session
            guard let reply else { return }
            var buffer = context.channel.allocator.buffer(capacity: 64)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 64) { reply.encode(into: $0) }
            context.writeAndFlush(
                wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: buffer)), promise: nil)
        }
    }

    /// TCP: a session per connection, each packet after its 2-byte length.
    private final class StreamHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let state: Shared
        var session: UInt32?
        var pending = ByteBuffer()

        init(state: Shared) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var incoming = unwrapInboundIn(data)
            pending.writeBuffer(&incoming)
            while let length = pending.getInteger(at: pending.readerIndex, as: UInt16.self),
                pending.readableBytes >= 2 + Int(length)
            {
                pending.moveReaderIndex(forwardBy: 2)
                let frame = pending.readSlice(length: Int(length))!
                let (reply, known) = frame.withUnsafeReadableBytes { state.answer($0, session: session) }
                session = known
                guard let reply else { continue }
                var buffer = context.channel.allocator.buffer(capacity: 64)
                buffer.writeInteger(UInt16(0))
                let size = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 64) { reply.encode(into: $0) }
                buffer.setInteger(UInt16(size), at: buffer.readerIndex)
                context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
            }
            pending.discardReadBytes()
        }
    }
}
