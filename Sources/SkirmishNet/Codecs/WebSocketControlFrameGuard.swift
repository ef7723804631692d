import NIOCore
import NIOWebSocket

/// Refuses a WebSocket control frame that is fragmented or longer than 125 bytes (RFC 6455 §5.5) with 1002 as soon
/// as its header arrives, whatever its length.
///
/// NIO's frame decoder checks a frame's length against the message limit before it looks at the opcode, so a ping
/// claiming 100,000 bytes would be closed with 1009 (message too big) where the RFC calls for 1002 (protocol
/// error). This handler sits in front of the decoder, reads only the frame headers as the bytes pass (it copies and
/// holds nothing but at most one header's 14 bytes) and passes every byte on unchanged until it refuses.
package final class WebSocketControlFrameGuard: ChannelInboundHandler {
    /// Raw bytes of the upgraded connection.
    package typealias InboundIn = ByteBuffer
    /// The same bytes, unchanged.
    package typealias InboundOut = ByteBuffer
    /// The close frame it sends when it refuses.
    package typealias OutboundOut = WebSocketFrame

    /// The header read so far (at most 14 bytes: two, the extended length, the mask).
    private var header: [UInt8] = []
    /// Payload bytes of the current frame still to pass before the next header.
    private var payloadLeft: UInt64 = 0
    private var refused = false

    /// A guard for the server side of an upgraded connection (its close frame goes unmasked).
    package init() {
        header.reserveCapacity(14)
    }

    /// Passes the bytes on, refusing at the first control frame header that breaks §5.5.
    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let buffer = unwrapInboundIn(data)
        let broken = buffer.withUnsafeReadableBytes { bytes in scan(bytes) }
        guard broken else { return context.fireChannelRead(data) }
        refused = true
        var code = context.channel.allocator.buffer(capacity: 2)
        code.write(webSocketErrorCode: .protocolError)
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: code)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
        context.fireErrorCaught(FrameError.badControlFrame)
    }

    /// Walks `bytes` frame by frame; `true` at a control frame that is fragmented or above 125 bytes.
    private func scan(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < bytes.count {
            if payloadLeft > 0 {
                let skip = Int(min(payloadLeft, UInt64(bytes.count - index)))
                index += skip
                payloadLeft -= UInt64(skip)
                continue
            }
            header.append(bytes[index])
            index += 1
            guard let (fin, opcode, length) = Self.parse(header) else { continue }
            header.removeAll(keepingCapacity: true)
            if opcode >= 0x8, !fin || length > 125 { return true }
            payloadLeft = length
        }
        return false
    }

    /// The frame's fin bit, opcode and payload length once `header` holds the whole header, `nil` before.
    static func parse(_ header: [UInt8]) -> (fin: Bool, opcode: UInt8, length: UInt64)? {
        guard header.count >= 2 else { return nil }
        let fin = header[0] & 0x80 != 0
        let opcode = header[0] & 0x0F
        let masked = header[1] & 0x80 != 0
        let short = UInt64(header[1] & 0x7F)
        let extended = short == 126 ? 2 : short == 127 ? 8 : 0
        guard header.count == 2 + extended + (masked ? 4 : 0) else { return nil }
        guard extended > 0 else { return (fin, opcode, short) }
        let length = header[2..<(2 + extended)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (fin, opcode, length)
    }
}
