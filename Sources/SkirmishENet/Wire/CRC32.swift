/// The CRC-32 libenet offers as its packet checksum (`enet_crc32`, packet.c): the reflected IEEE 802.3 polynomial
/// (0x04C11DB7, table built from its reflection 0xEDB88320), initial value and final XOR 0xFFFFFFFF — the common
/// CRC-32 whose check value for "123456789" is 0xCBF43926. libenet stores it in network order, so the wire carries
/// it big-endian like every other field.
///
/// The checksum of a datagram is computed with its own checksum field holding the seed instead (the connect id, or 0
/// before the peer has an id): ``checksum(_:seedAt:seed:)`` reads around the field rather than copying the datagram.
enum CRC32 {
    /// The byte-wise lookup table, computed once.
    static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        return crc
    }

    /// The CRC-32 of `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        ~update(0xFFFF_FFFF, bytes)
    }

    /// The CRC-32 of `bytes` with the four bytes at `offset` read as `seed` (big-endian).
    static func checksum(_ bytes: UnsafeRawBufferPointer, seedAt offset: Int, seed: UInt32) -> UInt32 {
        precondition(offset >= 0 && offset + 4 <= bytes.count)
        var crc: UInt32 = 0xFFFF_FFFF
        crc = update(crc, UnsafeRawBufferPointer(rebasing: bytes[0..<offset]))
        for shift in stride(from: 24, through: 0, by: -8) {
            crc = update(crc, UInt8(truncatingIfNeeded: seed >> shift))
        }
        crc = update(crc, UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)...]))
        return ~crc
    }

    @inline(__always)
    private static func update(_ crc: UInt32, _ byte: UInt8) -> UInt32 {
        (crc >> 8) ^ table[Int((crc ^ UInt32(byte)) & 0xFF)]
    }

    private static func update(_ start: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = start
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = (crc >> 8) ^ table[Int((crc ^ UInt32(byte)) & 0xFF)] }
        }
        return crc
    }
}
