/// Splits a TCP byte stream into packets framed by a u32 big-endian length prefix.
///
/// A pure incremental decoder: feed it whatever the socket returned (a partial frame, several coalesced frames,
/// one byte at a time) and take out whole frames. A length above `maxFrameSize` is refused as soon as its four
/// prefix bytes arrive, before any of its body is buffered, so a hostile peer cannot make it grow.
public struct FrameDecoder: Sendable {
    /// Why the stream cannot continue. After an error the connection must be closed: framing is lost.
    public enum Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// A frame announced `length` bytes, more than the limit.
        case frameTooLarge(length: UInt32)

        /// The announced length and the limit, for the log line of the closed connection.
        public var description: String {
            switch self {
            case .frameTooLarge(let length):
                "frame announces \(length) bytes, above the \(WireLimits.maxFrame)-byte limit; closing the stream"
            }
        }
    }

    /// The largest frame body accepted, in bytes; a longer announced length is ``Error/frameTooLarge(length:)``.
    public let maxFrameSize: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// A decoder with an empty buffer that refuses frames above `maxFrameSize` bytes (65,536 by default).
    public init(maxFrameSize: Int = WireLimits.maxFrame) {
        self.maxFrameSize = maxFrameSize
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes read from the stream.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if readIndex > 0, readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 4_096, readIndex * 2 > buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame's bytes, or `nil` until more bytes arrive.
    public mutating func next() throws(Error) -> ArraySlice<UInt8>? {
        guard bufferedByteCount >= 4 else { return nil }
        var length: UInt32 = 0
        for i in 0..<4 {
            length = length << 8 | UInt32(buffer[readIndex + i])
        }
        guard length <= maxFrameSize else { throw .frameTooLarge(length: length) }
        let end = readIndex + 4 + Int(length)
        guard buffer.count >= end else { return nil }
        let frame = buffer[(readIndex + 4)..<end]
        readIndex = end
        return frame
    }

    /// Writes `packet` as a frame (length prefix and body) at the start of `buffer`; returns the bytes taken.
    public static func encode(_ packet: Packet, into buffer: UnsafeMutableRawBufferPointer) throws(EncodeError) -> Int {
        guard buffer.count >= 4 else { throw .bufferTooSmall(needed: 4 + PacketHeader.size) }
        let length = try packet.encode(into: UnsafeMutableRawBufferPointer(rebasing: buffer[4...]))
        buffer.storeBytes(of: UInt32(length).bigEndian, toByteOffset: 0, as: UInt32.self)
        return 4 + length
    }
}
