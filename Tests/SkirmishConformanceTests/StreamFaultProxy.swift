import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishWire

/// A TCP proxy in front of the real server's TCP listener that breaks one rule (a ``Fault`` that applies to streams,
/// ``Fault/onStreams``), or none: the stream counterpart of ``FaultProxy``.
///
/// Each client connection gets its own upstream connection. Frames are cut at their length prefixes; the server's are
/// decoded and rewritten as ``Fault/rewrite(_:seat:snapshots:)`` says (the same rewrites as over UDP, with no trailer
/// to seal again and every number 0), the client's passed on as they came.
enum StreamFaultProxy {
    static func start(fault: Fault?, server: SocketAddress) async throws -> RelayListener {
        try await RelayListener.start(
            server: server,
            client: { client in
                let pipe = StreamPipe(fault: fault, client: client)
                try client.pipeline.syncOperations.addHandler(ByteToMessageHandler(PacketFrameCodec.FrameSlicing()))
                try client.pipeline.syncOperations.addHandler(
                    FrameHandler(pipe.fromClient, closed: pipe.close, failed: pipe.clientFailed))
                return pipe
            },
            upstream: { upstream, pipe in
                let pipe = pipe as! StreamPipe
                try upstream.pipeline.syncOperations.addHandler(ByteToMessageHandler(PacketFrameCodec.FrameSlicing()))
                try upstream.pipeline.syncOperations.addHandler(FrameHandler(pipe.fromServer, closed: pipe.close))
            })
    }
}

/// One client connection and its upstream, confined to the client channel's loop.
private final class StreamPipe: RelayListener.Pipe, @unchecked Sendable {
    // @unchecked: every method runs on the loop of `client`, which is also the upstream's loop (the upstream is
    // bootstrapped on `client.eventLoop`), and the proxy's group has one thread.
    let fault: Fault?
    let client: any Channel
    var upstream: (any Channel)?
    var waiting: [ByteBuffer] = []
    var seat: UInt8?
    var snapshots = 0
    var dead = false

    init(fault: Fault?, client: any Channel) {
        self.fault = fault
        self.client = client
    }

    func attach(_ channel: any Channel) {
        upstream = channel
        for body in waiting { write(body, on: channel) }
        waiting = []
    }

    func fromClient(_ body: ByteBuffer) {
        guard !dead else { return }
        if fault == .diesOnGarbage,
            (try? Packet.decode(Array(body.readableBytesView), maxSize: WireLimits.maxFrame)) == nil
        {
            dead = true
            return
        }
        if fault == .ignoresDisconnect,
            case .disconnect? = (try? Packet.decode(Array(body.readableBytesView), maxSize: WireLimits.maxFrame))?
                .message
        {
            return
        }
        if fault == .acceptsBadNames,
            case .hello(var hello)? = (try? Packet.decode(Array(body.readableBytesView), maxSize: WireLimits.maxFrame))?
                .message, !PlayerName.isAcceptable(hello.name)
        {
            hello.name = "clean"
            let clean = client.allocator.buffer(bytes: (try? Packet(.hello(hello)).encoded()) ?? [])
            guard let upstream else { return waiting.append(clean) }
            return write(clean, on: upstream)
        }
        guard let upstream else { return waiting.append(body) }
        write(body, on: upstream)
    }

    func fromServer(_ body: ByteBuffer) {
        guard !dead else { return }
        guard var packet = try? Packet.decode(Array(body.readableBytesView), maxSize: WireLimits.maxFrame) else {
            return write(body, on: client)
        }
        if case .welcome(let welcome) = packet.message { seat = welcome.seat }
        if fault == .numbersStreams, packet.message.type.delivery == .unreliable {
            packet.number = 7
            return write(client.allocator.buffer(bytes: (try? packet.encoded()) ?? []), on: client)
        }
        switch fault?.rewrite(packet.message, seat: seat, snapshots: &snapshots) ?? .pass {
        case .pass:
            write(body, on: client)
        case .drop:
            return
        case .replace(let message):
            packet.message = message
            guard let bytes = try? packet.encoded() else { return }
            write(client.allocator.buffer(bytes: bytes), on: client)
        case .delay(let amount):
            client.eventLoop.scheduleTask(in: amount) { self.write(body, on: self.client) }
        }
    }

    func close() {
        client.close(promise: nil)
        upstream?.close(promise: nil)
    }

    /// The client's stream broke (a frame over the limit): closed, or with ``Fault/keepsOversizeOpen`` swallowed
    /// and the connection left open.
    func clientFailed() {
        if fault == .keepsOversizeOpen {
            dead = true
        } else {
            close()
        }
    }

    /// Writes `body` after its u32 big-endian length: one frame.
    private func write(_ body: ByteBuffer, on channel: any Channel) {
        var frame = channel.allocator.buffer(capacity: body.readableBytes + 4)
        frame.writeInteger(UInt32(body.readableBytes))
        frame.writeImmutableBuffer(body)
        channel.writeAndFlush(frame, promise: nil)
    }
}

/// Hands each frame's body to a closure, and says when the connection ends, on the channel's loop.
private final class FrameHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: the closures run only on the channel's loop (the proxy's one thread).
    typealias InboundIn = ByteBuffer
    let body: (ByteBuffer) -> Void
    let closed: () -> Void
    let failed: () -> Void

    init(_ body: @escaping (ByteBuffer) -> Void, closed: @escaping () -> Void, failed: (() -> Void)? = nil) {
        self.body = body
        self.closed = closed
        self.failed = failed ?? closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { body(unwrapInboundIn(data)) }

    func channelInactive(context: ChannelHandlerContext) { closed() }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { failed() }
}
