import NIOCore
import NIOWebSocket
import SkirmishWire

/// WebSocket framing: one binary message is one packet (DESIGN §2).
///
/// Answers pings, honours close frames, refuses text frames (``FrameError/notBinary``, then close) and reports a
/// binary message that does not decode as its ``SkirmishWire/DecodeError`` without closing. Outbound packets leave as
/// single binary frames, masked when this side is a client (RFC 6455 §5.3).
public final class WebSocketPacketCodec: ChannelDuplexHandler {
    public typealias InboundIn = WebSocketFrame
    public typealias InboundOut = Packet
    public typealias OutboundIn = Packet
    public typealias OutboundOut = WebSocketFrame

    private let isClient: Bool
    private var closing = false

    public init(isClient: Bool) {
        self.isClient = isClient
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .binary:
            var payload = frame.unmaskedData
            let result = payload.withUnsafeReadableBytes { bytes in
                Result { () throws(DecodeError) in try Packet.decode(bytes, maxSize: WireLimits.maxFrame) }
            }
            payload.moveReaderIndex(to: payload.writerIndex)
            switch result {
            case .success(let packet): context.fireChannelRead(wrapInboundOut(packet))
            case .failure(let error): context.fireErrorCaught(error)
            }
        case .ping:
            send(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData), context: context)
            context.flush()
        case .connectionClose:
            if !closing {
                closing = true
                var data = context.channel.allocator.buffer(capacity: 2)
                data.write(webSocketErrorCode: .normalClosure)
                send(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), context: context)
                context.flush()
            }
            context.close(promise: nil)
        case .text:
            context.fireErrorCaught(FrameError.notBinary)
        default:
            break
        }
    }

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
