import SkirmishNet

/// A sender's machine and network: its address without the port, and the prefix that address sits in.
///
/// Limits keyed on address and port let one machine multiply them by opening sockets (40 sockets on one IP sent
/// 16,000 packets/s against a limit of 400); keyed on the host they hold against one machine, and keyed on the
/// prefix (/24 of IPv4, /56 of IPv6 by default — what one customer of a provider usually holds) against one network.
/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, what a dual-stack socket reports) counts as its IPv4 address.
package struct SourceHost: Hashable, Sendable, CustomStringConvertible {
    /// 4 or 6.
    package let version: UInt8
    /// How many leading bits of the address this key keeps (32 or 128 for a whole host).
    package let bits: UInt8
    /// The kept bits, laid out as in ``SkirmishNet/DatagramAddress``; the rest are zero.
    package let high: UInt64
    package let low: UInt64

    /// The host `address` is on.
    package init(_ address: DatagramAddress) {
        if address.version == 6, address.high == 0, address.low >> 32 == 0xFFFF {
            self.init(version: 4, bits: 32, high: (address.low & 0xFFFF_FFFF) << 32, low: 0)
        } else {
            self.init(
                version: address.version, bits: address.version == 4 ? 32 : 128, high: address.high, low: address.low)
        }
    }

    private init(version: UInt8, bits: UInt8, high: UInt64, low: UInt64) {
        self.version = version
        self.bits = bits
        self.high = high
        self.low = low
    }

    /// The network of this host: its first `ipv4` bits (IPv4) or `ipv6` bits (IPv6).
    package func prefix(ipv4: Int, ipv6: Int) -> SourceHost {
        let kept = version == 4 ? min(max(ipv4, 0), 32) : min(max(ipv6, 0), 128)
        let highBits = min(kept, 64)
        let lowBits = max(kept - 64, 0)
        let highMask: UInt64 = highBits == 0 ? 0 : ~0 << UInt64(64 - highBits)
        let lowMask: UInt64 = lowBits == 0 ? 0 : ~0 << UInt64(64 - lowBits)
        return SourceHost(version: version, bits: UInt8(kept), high: high & highMask, low: low & lowMask)
    }

    /// The words a ``RateSketch`` hashes; `kind` separates the limits that share one sketch.
    package func sketchHash(_ sketch: RateSketch, kind: UInt64) -> UInt64 {
        sketch.hash(high, low, kind << 16 | UInt64(version) << 8 | UInt64(bits))
    }

    package var description: String { "\(DatagramAddress.text(version: version, high: high, low: low))/\(bits)" }
}

extension Dictionary where Value == Int {
    /// Takes one from `key`'s count, forgetting the key at zero (a table of counts per host or prefix holds only the
    /// sources that have something open).
    mutating func countDown(_ key: Key) {
        guard let count = self[key] else { return }
        self[key] = count > 1 ? count - 1 : nil
    }
}
