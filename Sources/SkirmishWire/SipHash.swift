/// SipHash-2-4, a keyed pseudo-random function (Aumasson & Bernstein, 2012).
///
/// Used for the handshake's stateless cookies (without the server's secret key nobody can forge the cookie for an
/// address; the Linux kernel uses the same function for SYN cookies) and for the datagram trailer of every
/// post-handshake UDP packet (``SessionKey``). It lives here, in the wire module, because both ends compute it.
package struct SipHash {
    private var v0: UInt64
    private var v1: UInt64
    private var v2: UInt64
    private var v3: UInt64
    private var tail: UInt64 = 0
    private var tailCount = 0
    private var length = 0

    package init(key0: UInt64, key1: UInt64) {
        v0 = key0 ^ 0x736F_6D65_7073_6575
        v1 = key1 ^ 0x646F_7261_6E64_6F6D
        v2 = key0 ^ 0x6C79_6765_6E65_7261
        v3 = key1 ^ 0x7465_6462_7974_6573
    }

    private mutating func round() {
        v0 &+= v1
        v1 = v1.rotatedLeft(13) ^ v0
        v0 = v0.rotatedLeft(32)
        v2 &+= v3
        v3 = v3.rotatedLeft(16) ^ v2
        v0 &+= v3
        v3 = v3.rotatedLeft(21) ^ v0
        v2 &+= v1
        v1 = v1.rotatedLeft(17) ^ v2
        v2 = v2.rotatedLeft(32)
    }

    private mutating func compress(_ m: UInt64) {
        v3 ^= m
        round()
        round()
        v0 ^= m
    }

    package mutating func combine(_ byte: UInt8) {
        tail |= UInt64(byte) << (8 * UInt64(tailCount))
        tailCount += 1
        length += 1
        if tailCount == 8 {
            compress(tail)
            tail = 0
            tailCount = 0
        }
    }

    package mutating func combine(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { combine(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    package mutating func combine(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { combine(byte) }
    }

    /// Adds raw bytes, eight at a time where it can: the per-datagram MAC path, which allocates nothing.
    package mutating func combine(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        if tailCount == 0 {
            while bytes.count - index >= 8 {
                // SipHash reads its message as little-endian 64-bit words.
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                compress(word)
                length += 8
                index += 8
            }
        }
        while index < bytes.count {
            combine(bytes[index])
            index += 1
        }
    }

    package consuming func finalize() -> UInt64 {
        let b = UInt64(truncatingIfNeeded: length) << 56 | tail
        compress(b)
        v2 ^= 0xFF
        round()
        round()
        round()
        round()
        return v0 ^ v1 ^ v2 ^ v3
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
