import NIOCore
import NIOPosix
import SkirmishWire

/// A UDP proxy on loopback between bots and the real server that rewrites what the server sends, sealing what it
/// changed under the session's key: a man in the middle that saw the `Welcome`, as a server that drifted would be.
///
/// Each client address gets its own upstream socket (so the server sees one source per bot, as without the proxy).
/// Client-to-server datagrams pass untouched. A server datagram that opens under the key of its client's latest
/// `Welcome` is decoded and handed to that client's `tamper` (one per client, made by `perClient`, called on the
/// proxy's event loop only); a changed message is re-encoded with the same packet number and sealed again, so the
/// client's trailer check passes and only its replica can tell. Everything runs on one event loop.
final class UDPTamperingProxy: Sendable {
    let channel: any Channel
    let port: Int

    static func start(
        to server: SocketAddress, group: any EventLoopGroup,
        perClient: @escaping @Sendable () -> (Message) -> [Message]
    ) async throws -> UDPTamperingProxy {
        let loop = group.next()
        let channel = try await DatagramBootstrap(group: loop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Front(server: server, perClient: perClient))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return UDPTamperingProxy(channel: channel, port: channel.localAddress?.port ?? 0)
    }

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    func close() async {
        let clients = try? await channel.eventLoop.submit { [channel] in
            try channel.pipeline.syncOperations.handler(type: Front.self).upstreams()
        }.get()
        for client in clients ?? [] { try? await client.close() }
        try? await channel.close()
    }

    /// One client's path to the server: its socket (once bound), what waits for it, its key and its rewriter.
    final class Upstream {
        var channel: (any Channel)?
        var pending: [ByteBuffer] = []
        var key: SessionKey?
        let tamper: (Message) -> [Message]
        /// What was forwarded for each reliable packet number: a resend gets the same message as the first copy, and
        /// `tamper` sees each reliable message once (a resend changed again would count a change the client drops as
        /// a duplicate).
        var forwarded: [UInt32: Message] = [:]

        init(tamper: @escaping (Message) -> [Message]) { self.tamper = tamper }

        /// The datagram to forward in place of `bytes`, from the server.
        func rewrite(_ bytes: [UInt8]) -> [UInt8] {
            if let key, let packet = Self.open(bytes, key) {
                let reliable = packet.message.type.delivery == .reliable && packet.number != 0
                let replacement: [Message]
                if reliable, let first = forwarded[packet.number] {
                    replacement = [first]
                } else {
                    replacement = tamper(packet.message)
                    if reliable, replacement.count == 1 { forwarded[packet.number] = replacement[0] }
                }
                guard replacement.count == 1, replacement[0] != packet.message,
                    var encoded = try? Packet(number: packet.number, replacement[0]).encoded()
                else { return bytes }
                let length = encoded.count
                encoded += [UInt8](repeating: 0, count: SessionKey.trailerSize)
                _ = encoded.withUnsafeMutableBytes { key.seal($0, length: length, from: .server) }
                return encoded
            }
            // Not under the current key: a handshake message, or a Welcome (plain or sealed under the key it carries).
            let plain = try? Packet.decode(bytes)
            let sealed =
                bytes.count > SessionKey.trailerSize
                ? try? Packet.decode(Array(bytes.dropLast(SessionKey.trailerSize))) : nil
            if case .welcome(let welcome) = (plain ?? sealed)?.message {
                if welcome.sessionKey != .zero, welcome.sessionKey != key {
                    key = welcome.sessionKey
                    forwarded.removeAll()
                }
                _ = tamper(.welcome(welcome))
            }
            return bytes
        }

        static func open(_ bytes: [UInt8], _ key: SessionKey) -> Packet? {
            bytes.withUnsafeBytes { raw in
                key.open(raw, from: .server).flatMap { try? Packet.decode(Array($0)) }
            }
        }
    }

    /// Client side: finds or opens each client's upstream socket and forwards its datagrams.
    final class Front: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let server: SocketAddress
        let perClient: @Sendable () -> (Message) -> [Message]
        private var clients: [SocketAddress: Upstream] = [:]

        init(server: SocketAddress, perClient: @escaping @Sendable () -> (Message) -> [Message]) {
            self.server = server
            self.perClient = perClient
        }

        func upstreams() -> [any Channel] { clients.values.compactMap(\.channel) }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let envelope = unwrapInboundIn(data)
            let client = envelope.remoteAddress
            if let upstream = clients[client] {
                if let channel = upstream.channel {
                    channel.writeAndFlush(AddressedEnvelope(remoteAddress: server, data: envelope.data), promise: nil)
                } else {
                    upstream.pending.append(envelope.data)
                }
                return
            }
            let upstream = Upstream(tamper: perClient())
            upstream.pending.append(envelope.data)
            clients[client] = upstream
            let bound = NIOLoopBound(upstream, eventLoop: context.eventLoop)
            let front = context.channel
            let server = self.server
            DatagramBootstrap(group: context.eventLoop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            Back(front: front, client: client, upstream: bound.value))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .whenSuccess { channel in
                    let upstream = bound.value
                    upstream.channel = channel
                    for datagram in upstream.pending {
                        channel.write(AddressedEnvelope(remoteAddress: server, data: datagram), promise: nil)
                    }
                    upstream.pending = []
                    channel.flush()
                }
        }
    }

    /// Server side of one client: rewrites and returns what the server sends to it.
    final class Back: ChannelInboundHandler {
        typealias InboundIn = AddressedEnvelope<ByteBuffer>
        let front: any Channel
        let client: SocketAddress
        let upstream: Upstream

        init(front: any Channel, client: SocketAddress, upstream: Upstream) {
            self.front = front
            self.client = client
            self.upstream = upstream
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data).data
            let bytes = upstream.rewrite(buffer.readBytes(length: buffer.readableBytes) ?? [])
            front.writeAndFlush(
                AddressedEnvelope(remoteAddress: client, data: front.allocator.buffer(bytes: bytes)), promise: nil)
        }
    }
}
