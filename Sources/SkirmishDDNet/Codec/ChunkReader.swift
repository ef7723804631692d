/// Walks the chunks of a decoded payload (`CNetRecvUnpacker::FetchChunk`): each is a ``ChunkHeader`` and that many
/// bytes of one message.
struct ChunkReader {
    /// One chunk: its header and its message bytes (borrowed from the payload).
    struct Chunk {
        var header: ChunkHeader
        var data: UnsafeRawBufferPointer
    }

    let payload: UnsafeRawBufferPointer
    private var offset = 0
    private var left: Int

    /// A reader over `payload` expecting `count` chunks (the packet header's count).
    init(_ payload: UnsafeRawBufferPointer, count: Int) {
        self.payload = payload
        left = count
    }

    /// The next chunk, `nil` after the last; throws ``DecodeError/badChunk`` when a header or its data is cut off,
    /// after which the rest of the packet is unreadable.
    mutating func next() throws(DecodeError) -> Chunk? {
        guard left > 0 else { return nil }
        guard let header = ChunkHeader(payload, at: offset) else {
            left = 0
            throw .badChunk
        }
        let start = offset + header.length
        guard start + header.size <= payload.count else {
            left = 0
            throw .badChunk
        }
        offset = start + header.size
        left -= 1
        return Chunk(header: header, data: UnsafeRawBufferPointer(rebasing: payload[start..<offset]))
    }
}
