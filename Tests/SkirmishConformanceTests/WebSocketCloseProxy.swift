import NIOCore
import NIOPosix

/// A TCP relay in front of the real server's HTTP listener that passes a WebSocket connection's bytes through, except
/// that every close frame the server sends carries code 1000 (normal closure) instead of its own: a server that closes
/// on what it must refuse, but with the wrong code (``Fault/wrongCloseCodes``).
///
/// The client's bytes go up unchanged. The server's are the HTTP upgrade response, passed as it is, then unmasked
/// frames, cut at their headers (RFC 6455 §5.2) so that a close frame's status code can be rewritten.
enum WebSocketCloseProxy {
    static func start(server: SocketAddress) async throws -> RelayListener {
        try await RelayListener.start(
            server: server,
            client: { client in
                let pipe = BytePipe(client: client)
                try client.pipeline.syncOperations.addHandler(BytesHandler(pipe.fromClient, closed: pipe.close))
                return pipe
            },
            upstream: { upstream, pipe in
                let pipe = pipe as! BytePipe
                try upstream.pipeline.syncOperations.addHandler(BytesHandler(pipe.fromServer, closed: pipe.close))
            })
    }
}

/// One client connection and its upstream, confined to the client channel's loop.
private final class BytePipe: RelayListener.Pipe, @unchecked Sendable {
    // @unchecked: every method runs on the loop of `client`, which is also the upstream's loop, and the proxy's group
    // has one thread.
    let client: any Channel
    var upstream: (any Channel)?
    var waiting: [ByteBuffer] = []
    /// The server's bytes not yet passed on: the upgrade response until its blank line, then a partial frame.
    var pending: [UInt8] = []
    var upgraded = false

    init(client: any Channel) { self.client = client }

    func attach(_ channel: any Channel) {
        upstream = channel
        for bytes in waiting { channel.writeAndFlush(bytes, promise: nil) }
        waiting = []
    }

    func fromClient(_ bytes: ByteBuffer) {
        guard let upstream else { return waiting.append(bytes) }
        upstream.writeAndFlush(bytes, promise: nil)
    }

    func fromServer(_ bytes: ByteBuffer) {
        pending += Array(bytes.readableBytesView)
        if !upgraded {
            guard let end = Self.headEnd(pending) else { return }
            write(Array(pending[..<end]))
            pending.removeFirst(end)
            upgraded = true
        }
        while let length = Self.frameLength(pending) {
            var frame = Array(pending[..<length])
            pending.removeFirst(length)
            // A close frame (opcode 8) with a status code: the code is the payload's first two bytes. Server frames
            // are unmasked, so the payload starts after the header's length fields.
            if frame[0] & 0x0F == 0x8, let start = Self.payloadStart(frame), length - start >= 2 {
                frame[start] = 0x03
                frame[start + 1] = 0xE8
            }
            write(frame)
        }
    }

    func close() {
        client.close(promise: nil)
        upstream?.close(promise: nil)
    }

    private func write(_ bytes: [UInt8]) {
        client.writeAndFlush(client.allocator.buffer(bytes: bytes), promise: nil)
    }

    /// Where the HTTP head ends (after its blank line), if it has.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index..<(index + 4)].elementsEqual([13, 10, 13, 10]) {
            return index + 4
        }
        return nil
    }

    /// Where a frame's payload starts, once its header has arrived.
    private static func payloadStart(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        let mask = bytes[1] & 0x80 != 0 ? 4 : 0
        switch bytes[1] & 0x7F {
        case 126: return bytes.count >= 4 ? 4 + mask : nil
        case 127: return bytes.count >= 10 ? 10 + mask : nil
        default: return 2 + mask
        }
    }

    /// The length of the whole first frame of `bytes`, once all of it has arrived.
    private static func frameLength(_ bytes: [UInt8]) -> Int? {
        guard let start = payloadStart(bytes) else { return nil }
        let length: Int
        switch bytes[1] & 0x7F {
        case 126: length = Int(bytes[2]) << 8 | Int(bytes[3])
        case 127: length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
        case let short: length = Int(short)
        }
        return bytes.count >= start + length ? start + length : nil
    }
}

/// Hands each read to a closure, and says when the connection ends, on the channel's loop.
private final class BytesHandler: ChannelInboundHandler, @unchecked Sendable {
    // @unchecked: the closures run only on the channel's loop (the proxy's one thread).
    typealias InboundIn = ByteBuffer
    let body: (ByteBuffer) -> Void
    let closed: () -> Void

    init(_ body: @escaping (ByteBuffer) -> Void, closed: @escaping () -> Void) {
        self.body = body
        self.closed = closed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { body(unwrapInboundIn(data)) }

    func channelInactive(context: ChannelHandlerContext) { closed() }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { closed() }
}
