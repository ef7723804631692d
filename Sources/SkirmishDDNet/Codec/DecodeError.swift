/// Why bytes from the server were refused: a closed set, so each case is one `kind` label of the error counter and a
/// hostile server cannot mint new series.
///
/// Decoding never traps: every decoder in this folder returns one of these instead, and the connection counts it
/// (`ClientMetric.error(kind:)`) and drops what it could not read.
enum DecodeError: Error, Hashable, CaseIterable {
    /// A datagram shorter than its header, longer than `NET_MAX_PACKETSIZE`, or with flags 0.6 never sets.
    case badPacket
    /// Huffman data that ends before its end-of-stream symbol or decodes to more than a packet holds.
    case badHuffman
    /// The DDNet security token trailer is missing or is not the one the server gave.
    case badToken
    /// A chunk header that is cut off, or a chunk whose size runs past the packet.
    case badChunk
    /// A message whose fields are cut off or out of range.
    case badMessage
    /// Snapshot parts, varints or a delta that do not decode into a valid snapshot.
    case badSnapshot
    /// An acknowledgement of a sequence number this side never sent.
    case badAck

    /// The `kind` label: `bad_packet`, `bad_huffman`, …
    var kind: String {
        switch self {
        case .badPacket: "bad_packet"
        case .badHuffman: "bad_huffman"
        case .badToken: "bad_token"
        case .badChunk: "bad_chunk"
        case .badMessage: "bad_message"
        case .badSnapshot: "bad_snapshot"
        case .badAck: "bad_ack"
        }
    }
}
