import Foundation

/// The kernel's UDP drop counters (Linux `/proc`), so a benchmark or a test can tell datagrams the kernel threw away
/// from datagrams the network or the code lost. Each reads 0 where `/proc` is not there.
package enum UDPKernelCounters {
    /// Datagrams the kernel dropped machine-wide because a socket's receive buffer was full (`RcvbufErrors` of the
    /// `Udp:` lines in `/proc/net/snmp`).
    package static func receiveBufferErrors() -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/net/snmp", encoding: .utf8) else { return 0 }
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("Udp:") }
        guard lines.count == 2 else { return 0 }
        let names = lines[0].split(separator: " ")
        let values = lines[1].split(separator: " ")
        guard let index = names.firstIndex(of: "RcvbufErrors"), index < values.count else { return 0 }
        return UInt64(values[index]) ?? 0
    }

    /// Datagrams the kernel dropped at the UDP socket bound to local `port` (its receive buffer was full), from the
    /// `drops` column of `/proc/net/udp` and `/proc/net/udp6`.
    package static func socketDrops(localPort port: Int) -> UInt64 {
        var total: UInt64 = 0
        for file in ["/proc/net/udp", "/proc/net/udp6"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            total += socketDrops(in: text, localPort: port)
        }
        return total
    }

    private static func socketDrops(in text: String, localPort port: Int) -> UInt64 {
        var total: UInt64 = 0
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 12, let colon = fields[1].lastIndex(of: ":"),
                Int(fields[1][fields[1].index(after: colon)...], radix: 16) == port
            else { continue }
            total += UInt64(fields[fields.count - 1]) ?? 0
        }
        return total
    }
}
