import NIOCore
import NIOPosix
import SkirmishWire
import Synchronization

/// A TCP proxy on loopback that sits between bots and the real server and rewrites what the server sends: a server
/// that breaks one rule, made from one that keeps them all.
///
/// Client-to-server bytes pass untouched. Server-to-client frames are decoded, handed to `tamper` (which returns the
/// messages to send in their place, none to drop one), and re-framed.
final class TamperingProxy: Sendable {
    let channel: any Channel
    let port: Int
    private let tampered = Atomic<Int>(0)

    /// How many server messages `tamper` changed, dropped or added to.
    var changes: Int { tampered.load(ordering: .relaxed) }

    static func start(
        to server: SocketAddress, group: any EventLoopGroup, tamper: @escaping @Sendable (Message) -> [Message]
    ) async throws -> TamperingProxy {
        try await start(to: server, group: group, perConnection: { tamper })
    }

    /// A proxy whose rewriting keeps state per connection: `perConnection` makes each connection's `tamper` (called
    /// on that connection's event loop only, in the order the server sent its messages).
    static func start(
        to server: SocketAddress, group: any EventLoopGroup,
        perConnection: @escaping @Sendable () -> (Message) -> [Message]
    ) async throws -> TamperingProxy {
        let box = Mutex<TamperingProxy?>(nil)
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                let outbound = ClientBootstrap(group: inbound.eventLoop)
                    .channelInitializer { outbound in
                        outbound.pipeline.addHandler(
                            Rewriter(peer: inbound, tamper: perConnection()) { box.withLock { $0 }?.count() })
                    }
                    .connect(to: server)
                return outbound.flatMap { outbound in
                    inbound.pipeline.addHandler(Forwarder(peer: outbound))
                }.flatMapError { error in
                    inbound.close(promise: nil)
                    return inbound.eventLoop.makeFailedFuture(error)
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let proxy = TamperingProxy(channel: channel, port: channel.localAddress?.port ?? 0)
        box.withLock { $0 = proxy }
        return proxy
    }

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    private func count() { tampered.add(1, ordering: .relaxed) }

    func close() async { try? await channel.close() }

    /// Bots to server: bytes as they come; closing one side closes the other.
    final class Forwarder: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let peer: any Channel

        init(peer: any Channel) { self.peer = peer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            peer.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) { peer.close(promise: nil) }
    }

    /// Server to bots: whole frames, each message rewritten.
    final class Rewriter: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let peer: any Channel
        let tamper: (Message) -> [Message]
        let changed: () -> Void
        var decoder = FrameDecoder()

        init(peer: any Channel, tamper: @escaping (Message) -> [Message], changed: @escaping () -> Void) {
            self.peer = peer
            self.tamper = tamper
            self.changed = changed
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            decoder.append(buffer.readBytes(length: buffer.readableBytes) ?? [])
            var out = peer.allocator.buffer(capacity: 256)
            do {
                while let frame = try decoder.next() {
                    let packet = try Packet.decode(Array(frame))
                    let replacement = tamper(packet.message)
                    if replacement != [packet.message] { changed() }
                    for message in replacement {
                        let bytes = try Packet(number: packet.number, message).encoded()
                        out.writeInteger(UInt32(bytes.count))
                        out.writeBytes(bytes)
                    }
                }
            } catch {
                context.close(promise: nil)
                peer.close(promise: nil)
                return
            }
            if out.readableBytes > 0 { peer.writeAndFlush(out, promise: nil) }
        }

        func channelInactive(context: ChannelHandlerContext) { peer.close(promise: nil) }
    }
}
