import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// A stateless UDP echo for the client benchmark: Hello → Challenge, Hello with the cookie → Welcome, Ping → Pong
/// (the same bytes with the type changed, written back from the buffer it arrived in). It keeps nothing per client.
package final class EchoResponder: Sendable {
    package let channel: any Channel
    private let handler: NIOLoopBound<Handler>

    package struct Sample: Sendable {
        package var packets: UInt64
        package var cpu: Int64
    }

    private init(channel: any Channel, handler: NIOLoopBound<Handler>) {
        self.channel = channel
        self.handler = handler
    }

    package static func start(on loop: any EventLoop) async throws -> EchoResponder {
        let handler = try await loop.submit { NIOLoopBound(Handler(), eventLoop: loop) }.get()
        let channel = try await DatagramBootstrap(group: loop)
            .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
            .channelOption(.socketOption(.so_sndbuf), value: 4 << 20)
            .channelOption(.maxMessagesPerRead, value: 64)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(handler.value)
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return EchoResponder(channel: channel, handler: handler)
    }

    package var target: Target { Target(transport: .udp, host: "127.0.0.1", port: channel.localAddress?.port ?? 0) }

    package func sample() async throws -> Sample {
        try await channel.eventLoop.submit { [handler] in
            Sample(packets: handler.value.packets, cpu: BenchSystem.threadCPUNanoseconds())
        }.get()
    }

    package func close() async {
        try? await channel.close()
    }

    package final class Handler: ChannelInboundHandler {
        package typealias InboundIn = AddressedEnvelope<ByteBuffer>
        package typealias OutboundOut = AddressedEnvelope<ByteBuffer>

        static let cookie = Cookie(high: 0x5348_4F52_5443_5554, low: 0x0BEE_F00D_CAFE_D00D)
        /// One session key for every client: the echo is stateless and measures the client, it defends nothing.
        static let key = SessionKey(key0: 0x4543_484F_4543_484F, key1: 0x0BE4_C4B4_0BE4_C4B4)
        private(set) var packets: UInt64 = 0
        private var welcomes: UInt32 = 0

        package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var envelope = unwrapInboundIn(data)
            packets &+= 1
            let start = envelope.data.readerIndex
            guard let type = envelope.data.getInteger(at: start + 8, as: UInt16.self) else { return }
            switch type {
            case MessageType.ping.rawValue:
                // The Ping's own trailer is replaced by the Pong's (the type and the direction changed).
                let sealed = envelope.data.withUnsafeMutableReadableBytes { raw -> Bool in
                    guard raw.count > PacketHeader.size + SessionKey.trailerSize else { return false }
                    let length = raw.count - SessionKey.trailerSize
                    raw.storeBytes(of: MessageType.pong.rawValue.bigEndian, toByteOffset: 8, as: UInt16.self)
                    return Self.key.seal(raw, length: length, from: .server) != nil
                }
                guard sealed else { return }
                context.write(wrapOutboundOut(envelope), promise: nil)
            case MessageType.hello.rawValue:
                let decoded = envelope.data.withUnsafeReadableBytes { bytes in
                    try? Packet.decode(bytes, maxSize: WireLimits.maxDatagram)
                }
                guard case .hello(let hello) = decoded?.message else { return }
                let reply: Packet
                if hello.cookie == Self.cookie {
                    welcomes &+= 1
                    reply = Packet(
                        number: 1,
                        .welcome(
                            Welcome(
                                peer: welcomes, match: 1, seat: 0, tickRate: 60, resumeToken: 1, sessionKey: Self.key)))
                } else {
                    reply = Packet(.challenge(Challenge(cookie: Self.cookie)))
                }
                guard var bytes = try? reply.encoded() else { return }
                if case .welcome = reply.message {
                    bytes += withUnsafeBytes(of: bytes.withUnsafeBytes { Self.key.mac($0, from: .server) }.bigEndian) {
                        Array($0)
                    }
                }
                let out = AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: ByteBuffer(bytes: bytes))
                context.write(wrapOutboundOut(out), promise: nil)
            default:
                break // Acks and anything else need no answer.
            }
        }

        package func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }

        package func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A closed client port answers with ICMP, which surfaces here; the socket stays usable.
        }
    }
}
