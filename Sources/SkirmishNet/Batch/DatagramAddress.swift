#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An IPv4 or IPv6 address and port as plain bits: what a UDP peer is known by on a hot path.
///
/// NIO's `SocketAddress` keeps its `sockaddr` in a heap box, so making one per received datagram costs an allocation;
/// this value is read from the kernel's `sockaddr` bytes in place, hashes four words, and is written back as a
/// `sockaddr` for `sendmmsg(2)` without touching the heap.
///
/// The `sockaddr_in`/`sockaddr_in6` fields are read and written at their Linux offsets (family at 0, port at 2, IPv4
/// address at 4; IPv6 address at 8 and scope id at 24): with NIO in the build, Swift's member-import visibility
/// attributes the C structs' fields to NIO's private C module, which no target here may import.
package struct DatagramAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 or 6.
    package let version: UInt8
    /// The port, host order.
    package let port: UInt16
    /// IPv6 scope id; 0 for IPv4.
    package let scope: UInt32
    /// The address bytes in network order: IPv4 in the top four bytes of `high`, IPv6 across both.
    package let high: UInt64
    package let low: UInt64

    private init(version: UInt8, port: UInt16, scope: UInt32, high: UInt64, low: UInt64) {
        self.version = version
        self.port = port
        self.scope = scope
        self.high = high
        self.low = low
    }

    /// An IPv4 address from its 32 bits (127.0.0.1 is `0x7F00_0001`) and a port.
    package init(ipv4 address: UInt32, port: UInt16) {
        self.init(version: 4, port: port, scope: 0, high: UInt64(address) << 32, low: 0)
    }

    /// Reads the `sockaddr_in` or `sockaddr_in6` at the start of `raw` (as `recvmmsg` or `getsockname` wrote it);
    /// `nil` for another family or too few bytes.
    package init?(rawSockaddr raw: UnsafeRawBufferPointer) {
        guard raw.count >= MemoryLayout<sockaddr_in>.size else { return nil }
        let family = Int32(raw.loadUnaligned(fromByteOffset: 0, as: sa_family_t.self))
        let port = Self.bigEndian16(raw, at: 2)
        switch family {
        case AF_INET:
            self.init(ipv4: Self.bigEndian32(raw, at: 4), port: port)
        case AF_INET6:
            guard raw.count >= MemoryLayout<sockaddr_in6>.size else { return nil }
            let high = UInt64(Self.bigEndian32(raw, at: 8)) << 32 | UInt64(Self.bigEndian32(raw, at: 12))
            let low = UInt64(Self.bigEndian32(raw, at: 16)) << 32 | UInt64(Self.bigEndian32(raw, at: 20))
            let scope = raw.loadUnaligned(fromByteOffset: 24, as: UInt32.self)
            self.init(version: 6, port: port, scope: scope, high: high, low: low)
        default:
            return nil
        }
    }

    /// Writes the `sockaddr_in` or `sockaddr_in6` into `raw` (room for a `sockaddr_in6` at least) and returns its
    /// length.
    package func write(into raw: UnsafeMutableRawPointer) -> socklen_t {
        let length = version == 4 ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: length)
        raw.storeBytes(of: sa_family_t(version == 4 ? AF_INET : AF_INET6), as: sa_family_t.self)
        raw.storeBytes(of: port.bigEndian, toByteOffset: 2, as: UInt16.self)
        if version == 4 {
            raw.storeBytes(of: UInt32(truncatingIfNeeded: high >> 32).bigEndian, toByteOffset: 4, as: UInt32.self)
        } else {
            raw.storeBytes(of: high.bigEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: low.bigEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: scope, toByteOffset: 24, as: UInt32.self)
        }
        return socklen_t(length)
    }

    /// The address's bytes, family and port: what a handshake cookie is bound to.
    package var bytes: [UInt8] {
        var bytes: [UInt8] = [version, UInt8(port >> 8), UInt8(port & 0xFF)]
        bytes.reserveCapacity(version == 4 ? 7 : 23)
        let count = version == 4 ? 4 : 8
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: high >> (56 - 8 * index))) }
        if version == 6 {
            for index in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: low >> (56 - 8 * index))) }
            for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: scope >> (24 - 8 * index))) }
        }
        return bytes
    }

    package var description: String {
        let host = Self.text(version: version, high: high, low: low)
        return version == 4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    /// An address laid out as `high` and `low` (IPv4 in the top 32 bits of `high`), as text: `127.0.0.1`, or the
    /// eight groups of IPv6 in hexadecimal.
    package static func text(version: UInt8, high: UInt64, low: UInt64) -> String {
        if version == 4 {
            let a = high >> 32
            return "\(a >> 24 & 0xFF).\(a >> 16 & 0xFF).\(a >> 8 & 0xFF).\(a & 0xFF)"
        }
        var text = ""
        for group in 0..<8 {
            let word = group < 4 ? high >> (48 - 16 * group) : low >> (48 - 16 * (group - 4))
            text += (group == 0 ? "" : ":") + String(word & 0xFFFF, radix: 16)
        }
        return text
    }

    private static func bigEndian16(_ raw: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    private static func bigEndian32(_ raw: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}
