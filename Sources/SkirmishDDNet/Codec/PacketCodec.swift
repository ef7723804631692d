/// Whole datagrams of a 0.6 connection with DDNet's security token: decoding one into its header and chunk bytes,
/// encoding chunks or a control message into one.
///
/// The token (`src/engine/shared/network_conn.cpp`, `CNetConnection::Feed` and `CNetBase::SendPacket`) is four
/// bytes, little-endian, appended to the payload *before* compression; the server hands it out in its connect-accept
/// after the magic `TKEN` (`SECURITY_TOKEN_MAGIC`). Until then a client appends `0xFFFFFFFF`
/// (`NET_SECURITY_TOKEN_UNKNOWN`), which is how the server tells a DDNet client from a vanilla one.
enum PacketCodec {
    /// `SECURITY_TOKEN_MAGIC`.
    static let tokenMagic: [UInt8] = Array("TKEN".utf8)
    /// The token a client sends before it knows the server's (`NET_SECURITY_TOKEN_UNKNOWN`).
    static let unknownToken: UInt32 = 0xFFFF_FFFF

    /// Decodes `datagram`: its header, and its payload (decompressed, the token checked and removed when `token` is
    /// given) written into `payload`, whose first `count` bytes are then valid.
    static func decode(
        _ datagram: UnsafeRawBufferPointer, token: UInt32?, into payload: UnsafeMutableRawBufferPointer
    ) throws(DecodeError) -> (header: PacketHeader, count: Int) {
        guard let header = PacketHeader(datagram), !header.flags.contains(.sixup) else { throw .badPacket }
        let body = UnsafeRawBufferPointer(rebasing: datagram[PacketHeader.size...])
        var count: Int
        if header.flags.contains(.compression) {
            // `CNetBase::UnpackPacket` refuses compressed control packets.
            guard !header.flags.contains(.control) else { throw .badPacket }
            count = try Huffman.decompress(body, into: payload)
        } else {
            guard body.count <= payload.count else { throw .badPacket }
            payload.copyMemory(from: body)
            count = body.count
        }
        if let token, !header.flags.contains(.connectionless) {
            guard count >= 4, readToken(UnsafeRawBufferPointer(payload), at: count - 4) == token else {
                throw .badToken
            }
            count -= 4
        }
        if header.flags.contains(.control) && count < 1 { throw .badPacket }
        return (header, count)
    }

    /// The little-endian token at `offset`.
    static func readToken(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }

    /// Writes the token little-endian at `offset`.
    static func writeToken(_ token: UInt32, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: token >> (8 * UInt32(index))) }
    }

    /// Encodes a packet into `output`: the header, then `chunks` (chunk headers and data, `chunkCount` of them; for
    /// a control packet the message byte and its extra bytes) with `token` appended when there is one (a server
    /// without DDNet's token gets none), Huffman-compressed when that is smaller and `compress` allows it. `chunks`
    /// must have 4 spare bytes after `chunkBytes` for the token. Returns the datagram's size, or 0 when it does not
    /// fit.
    static func encode(
        flags: PacketHeader.Flags, ack: Int, chunkCount: Int, chunks: UnsafeMutableRawBufferPointer, chunkBytes: Int,
        token: UInt32?, compress: Bool, into output: UnsafeMutableRawBufferPointer
    ) -> Int {
        let trailer = token == nil ? 0 : 4
        guard chunkBytes + trailer <= chunks.count, output.count > PacketHeader.size else { return 0 }
        if let token { writeToken(token, into: chunks, at: chunkBytes) }
        let plain = UnsafeRawBufferPointer(rebasing: chunks[..<(chunkBytes + trailer)])
        var flags = flags
        let body = UnsafeMutableRawBufferPointer(
            rebasing: output[PacketHeader.size..<min(output.count, PacketHeader.maxPacketSize)])
        var size: Int
        if compress, let compressed = Huffman.compress(plain, into: body), compressed < plain.count {
            flags.insert(.compression)
            size = compressed
        } else {
            guard plain.count <= body.count else { return 0 }
            body.copyMemory(from: plain)
            flags.remove(.compression)
            size = plain.count
        }
        PacketHeader(flags: flags, ack: ack, chunkCount: chunkCount).write(into: output)
        return PacketHeader.size + size
    }
}
