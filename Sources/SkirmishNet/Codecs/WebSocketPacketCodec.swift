import NIOCore
import NIOWebSocket
import SkirmishWire

/// WebSocket framing: one binary message is one packet (DESIGN §2).
///
/// Answers pings, honours close frames and reassembles a binary message sent in fragments (RFC 6455 §5.4) up to the
/// 64 KiB packet limit. Refuses what RFC 6455 tells a receiver to refuse, each time reporting a ``FrameError`` and
/// closing with the status code the RFC names: a text message (1003, data it cannot accept, §7.4.1), a client frame
/// without a mask when this side is the server (1002, §5.1), a continuation out of place (1002, §5.4), and a message
/// above the limit (1009). A binary message that does not decode is reported as its ``SkirmishWire/DecodeError``
/// without closing. Outbound packets leave as single binary frames, masked when this side is a client (§5.3).
public final class WebSocketPacketCodec: ChannelDuplexHandler {
    /// WebSocket frames from NIO's frame decoder.
    public typealias InboundIn = WebSocketFrame
    /// One packet per complete binary message.
    public typealias InboundOut = Packet
    /// Packets to send, each as one binary message.
    public typealias OutboundIn = Packet
    /// Frames for NIO's frame encoder, masked when this side is a client.
    public typealias OutboundOut = WebSocketFrame

    private let isClient: Bool
    private var closing = false
    /// The fragments of a binary message so far; `nil` between messages.
    private var message: ByteBuffer?

    /// A codec for the client side (`isClient`: masks outbound frames) or the server side (requires masked frames).
    public init(isClient: Bool) {
        self.isClient = isClient
    }

    /// Answers pings and closes, reassembles binary messages and passes their packets up; refuses what RFC 6455 does.
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !closing else { return }
        if !isClient, frame.maskKey == nil { return refuse(.unmasked, code: .protocolError, context: context) }
        // Every whole frame is progress, but a message still missing fragments stays pending: the head of a server
        // pipeline times a message from its first byte to its last fragment, so fragments trickled one at a time
        // cannot hold a connection's buffer forever.
        let fragment = frame.opcode == .binary || frame.opcode == .continuation
        context.triggerUserOutboundEvent(StreamProgress(pending: fragment ? !frame.fin : message != nil), promise: nil)
        switch frame.opcode {
        case .binary:
            guard message == nil else { return refuse(.badFragment, code: .protocolError, context: context) }
            // The frame decoder admits a little more than the limit (its size check counts no header slack), so a
            // single frame just above 65,536 bytes is refused here, as a reassembled message is (1009).
            guard frame.length <= WireLimits.maxFrame else {
                return refuse(.oversize(frame.length), code: .messageTooLarge, context: context)
            }
            if frame.fin { return deliver(frame.unmaskedData, context: context) }
            message = frame.unmaskedData
        case .continuation:
            guard var assembled = message else { return refuse(.badFragment, code: .protocolError, context: context) }
            message = nil
            guard assembled.readableBytes + frame.length <= WireLimits.maxFrame else {
                return refuse(
                    .oversize(assembled.readableBytes + frame.length), code: .messageTooLarge, context: context)
            }
            var part = frame.unmaskedData
            assembled.writeBuffer(&part)
            if frame.fin { return deliver(assembled, context: context) }
            message = assembled
        case .ping:
            send(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData), context: context)
            context.flush()
        case .connectionClose:
            closing = true
            var data = context.channel.allocator.buffer(capacity: 2)
            data.write(webSocketErrorCode: .normalClosure)
            send(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), context: context)
            context.flush()
            context.close(promise: nil)
        case .text:
            refuse(.notBinary, code: .unacceptableData, context: context)
        default:
            break
        }
    }

    private func deliver(_ payload: ByteBuffer, context: ChannelHandlerContext) {
        let result = payload.withUnsafeReadableBytes { bytes in
            Result { () throws(DecodeError) in try Packet.decode(bytes, maxSize: WireLimits.maxFrame) }
        }
        switch result {
        case .success(let packet): context.fireChannelRead(wrapInboundOut(packet))
        case .failure(let error): context.fireErrorCaught(error)
        }
    }

    /// Reports `error`, sends a close frame with `code` and closes once it is written.
    private func refuse(_ error: FrameError, code: WebSocketErrorCode, context: ChannelHandlerContext) {
        closing = true
        message = nil
        var data = context.channel.allocator.buffer(capacity: 2)
        data.write(webSocketErrorCode: code)
        var frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        if isClient { frame.maskKey = .random() }
        let channel = context.channel
        // Written before the error is reported: a handler that closes on it must not close before the close frame.
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
        context.fireErrorCaught(error)
    }

    /// Encodes the packet into one binary frame, masked on the client side.
    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let packet = unwrapOutboundIn(data)
        var buffer = context.channel.allocator.buffer(capacity: 128)
        do {
            try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: WireLimits.maxFrame) { bytes in
                try packet.encode(into: bytes)
            }
        } catch {
            promise?.fail(error)
            return
        }
        context.write(wrapOutboundOut(frame(.binary, buffer)), promise: promise)
    }

    private func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: isClient ? .random() : nil, data: data)
    }

    private func send(_ frame: WebSocketFrame, context: ChannelHandlerContext) {
        var frame = frame
        if isClient { frame.maskKey = .random() }
        context.write(wrapOutboundOut(frame), promise: nil)
    }
}
