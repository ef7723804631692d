import NIOCore
import SkirmishNet
import SkirmishWire

/// Feeds UDP datagrams to the server core and writes its replies once per read batch.
///
/// NIO reads one datagram per readable event (`maxMessagesPerRead` 1); the server's ``DatagramListener`` reads the
/// rest in batches on the same socket, and ``channelReadComplete(context:)`` writes every reply with one flush.
final class DatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let server: NIOLoopBound<ServerLoop>

    init(server: NIOLoopBound<ServerLoop>) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let loop = server.value
        envelope.data.withUnsafeReadableBytes { bytes in loop.receive(bytes, from: envelope.remoteAddress) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        server.value.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A UDP socket reports ICMP errors (a bot's port closed) as read errors; the channel stays usable.
    }

    func channelInactive(context: ChannelHandlerContext) {
        server.value.datagramsClosed()
        context.fireChannelInactive()
    }
}

/// Feeds packets from a TCP or WebSocket connection (already framed and decoded by SkirmishNet's codecs) to the core.
final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = Packet

    private let server: NIOLoopBound<ServerLoop>
    private var connection: ConnectionID?

    init(server: NIOLoopBound<ServerLoop>) {
        self.server = server
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { register(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context)
        context.fireChannelActive()
    }

    private func register(_ context: ChannelHandlerContext) {
        guard connection == nil else { return }
        connection = server.value.register(stream: context.channel)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let connection else { return }
        let packet = unwrapInboundIn(data)
        server.value.core.receive(packet, from: connection, now: .now())
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        server.value.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as DecodeError:
            // The frame was whole, so the stream is still in step: count the packet and keep reading.
            server.value.core.streamError(Rejection(error))
        default:
            switch FrameError(classifying: error) {
            case .notBinary:
                // The WebSocket codec refused it and is closing with 1003.
                server.value.core.streamError(.textFrame)
            case .unmasked:
                server.value.core.streamError(.unmaskedFrame)
            case .badFragment, .badControlFrame:
                // Closing with 1002 (the codec, the control-frame guard or NIO's protocol error handler).
                server.value.core.streamError(.badFrame)
            case .oversize:
                // A TCP length prefix, WebSocket message or frame above the limit: the stream is out of step.
                server.value.core.streamError(.oversizeFrame)
                context.close(promise: nil)
            case nil:
                // A reset or another transport error: the connection is gone, but no frame was refused.
                context.close(promise: nil)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let connection { server.value.unregister(connection) }
        connection = nil
        context.fireChannelInactive()
    }
}

/// Why a connection was closed as soon as it was accepted.
struct ConnectionRefused: Error, CustomStringConvertible {
    var reason: Rejection
    var description: String { "connection refused: \(reason.label)" }
}
