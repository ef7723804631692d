import NIOCore
import NIOWebSocket
import SkirmishWire

/// TCP framing: each packet is preceded by its length as a u32, big-endian (DESIGN §2).
///
/// Inbound, a frame longer than ``SkirmishWire/WireLimits/maxFrame`` is refused as soon as its length prefix is read
/// — before its body is buffered — with ``FrameError/oversize(_:)``, after which the stream is out of step and the
/// connection must close. A whole frame that does not decode is reported as its ``SkirmishWire/DecodeError`` and
/// skipped, and reading continues with the next frame.
public enum PacketFrameCodec {
    /// The handlers to add to a TCP channel's pipeline, in order.
    public static func handlers() -> [any ChannelHandler] {
        [ByteToMessageHandler(FrameDecoding()), MessageToByteHandler(FrameEncoding())]
    }

    /// The handlers for a server's side of a TCP connection: frames report `StreamProgress` to the head of the
    /// pipeline, where the server times half-sent frames.
    public static func serverHandlers() -> [any ChannelHandler] {
        [ByteToMessageHandler(FrameDecoding(reportsProgress: true)), MessageToByteHandler(FrameEncoding())]
    }

    /// Inbound: bytes to packets.
    public struct FrameDecoding: ByteToMessageDecoder {
        /// Each whole frame's packet.
        public typealias InboundOut = Packet

        /// Whether each whole frame sends a `StreamProgress` event toward the head of the pipeline.
        public var reportsProgress: Bool

        /// A buffer larger than this that a large frame left behind is copied into a small one once the frame is
        /// read, so that a connection that once sent 64 KiB does not keep 64 KiB (or the read buffers it grew to).
        static let shrinkAbove = 16 << 10

        /// A decoder; `reportsProgress` is for the server's side, which times half-sent frames.
        public init(reportsProgress: Bool = false) {
            self.reportsProgress = reportsProgress
        }

        /// Reads every whole frame buffered: a packet goes up the pipeline, an undecodable one as its ``DecodeError``.
        public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws
            -> DecodingState
        {
            guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
            guard length <= UInt32(WireLimits.maxFrame) else { throw FrameError.oversize(Int(length)) }
            guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
            buffer.moveReaderIndex(forwardBy: 4)
            let frame = buffer.readSlice(length: Int(length))!
            let result = frame.withUnsafeReadableBytes { bytes in
                Result { () throws(DecodeError) in try Packet.decode(bytes, maxSize: WireLimits.maxFrame) }
            }
            if buffer.capacity > Self.shrinkAbove, buffer.readableBytes > 0, buffer.readableBytes < buffer.capacity / 4
            {
                var small = context.channel.allocator.buffer(capacity: buffer.readableBytes)
                small.writeImmutableBuffer(buffer)
                buffer = small
            }
            if reportsProgress {
                context.triggerUserOutboundEvent(StreamProgress(pending: buffer.readableBytes > 0), promise: nil)
            }
            switch result {
            case .success(let packet): context.fireChannelRead(wrapInboundOut(packet))
            case .failure(let error): context.fireErrorCaught(error)
            }
            return .continue
        }

        /// Reads what whole frames remain when the stream ends; a partial frame at the end is dropped.
        public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool)
            throws -> DecodingState
        {
            while try decode(context: context, buffer: &buffer) == .continue {}
            return .needMoreData
        }
    }

    /// Inbound, for clients that decode themselves: bytes to whole frame bodies, with the same oversize rule.
    public struct FrameSlicing: ByteToMessageDecoder {
        /// Each whole frame's body, without its length prefix.
        public typealias InboundOut = ByteBuffer

        /// A slicer; it keeps no state between frames.
        public init() {}

        /// Passes every whole frame's body up the pipeline; throws ``FrameError/oversize(_:)`` from the prefix alone.
        public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws
            -> DecodingState
        {
            guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
            guard length <= UInt32(WireLimits.maxFrame) else { throw FrameError.oversize(Int(length)) }
            guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
            buffer.moveReaderIndex(forwardBy: 4)
            context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: Int(length))!))
            return .continue
        }

        /// Passes what whole frames remain when the stream ends; a partial frame at the end is dropped.
        public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool)
            throws -> DecodingState
        {
            while try decode(context: context, buffer: &buffer) == .continue {}
            return .needMoreData
        }
    }

    /// Outbound: packets to length-prefixed bytes.
    public struct FrameEncoding: MessageToByteEncoder {
        /// The packets to frame.
        public typealias OutboundIn = Packet

        /// An encoder; it keeps no state.
        public init() {}

        /// Writes the packet's length (u32, big-endian), then the packet; throws the packet's ``EncodeError``.
        public func encode(data: Packet, out: inout ByteBuffer) throws {
            let start = out.writerIndex
            out.writeInteger(UInt32(0))
            let written = try out.writeWithUnsafeMutableBytes(minimumWritableBytes: WireLimits.maxFrame) { buffer in
                try data.encode(into: buffer)
            }
            out.setInteger(UInt32(written), at: start)
        }
    }
}

/// A stream framing error that leaves the stream out of step: the connection closes.
public enum FrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A length prefix above the 64 KiB frame limit.
    case oversize(Int)
    /// A WebSocket text frame, or another frame kind that cannot carry a packet (closed with 1003).
    case notBinary
    /// A client's WebSocket frame without a mask (RFC 6455 §5.1; closed with 1002).
    case unmasked
    /// A WebSocket continuation frame with no message to continue, or a new message inside an unfinished one
    /// (RFC 6455 §5.4; closed with 1002).
    case badFragment
    /// A WebSocket control frame that is fragmented or carries more than 125 bytes (RFC 6455 §5.5; closed with
    /// 1002, whatever its length).
    case badControlFrame

    /// The framing error behind a stream pipeline's `error`, or `nil` for one that is not about framing (a reset,
    /// a broken pipe): the codecs' own errors and NIO's WebSocket frame decoder's, each as the case it stands for.
    package init?(classifying error: any Error) {
        switch error {
        case let error as FrameError: self = error
        case NIOWebSocketError.invalidFrameLength: self = .oversize(WireLimits.maxFrame + 1)
        case NIOWebSocketError.fragmentedControlFrame, NIOWebSocketError.multiByteControlFrameLength:
            self = .badControlFrame
        default: return nil
        }
    }

    /// What broke the stream and why the connection closes.
    public var description: String {
        switch self {
        case .oversize(let length): "frame of \(length) bytes is above the 65536-byte limit"
        case .notBinary: "WebSocket message is not binary; every packet travels as one binary message"
        case .unmasked: "WebSocket frame from a client is not masked (RFC 6455 §5.1)"
        case .badFragment: "WebSocket continuation frame out of place (RFC 6455 §5.4)"
        case .badControlFrame: "WebSocket control frame fragmented or above 125 bytes (RFC 6455 §5.5)"
        }
    }
}
