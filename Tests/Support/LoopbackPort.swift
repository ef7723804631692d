import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Ports on 127.0.0.1 for tests that start a process or a peer on one.
public enum LoopbackPort {
    /// Binds `socket` to 127.0.0.1 on a port the kernel picks; that port, or `nil` when the bind failed.
    public static func bind(_ socket: Int32) -> UInt16? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        return bound ? UInt16(bigEndian: address.sin_port) : nil
    }

    /// A TCP port nobody listens on right now: bound, read and closed again (a process started next takes it).
    public static func free() -> Int? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        return bind(socket).map(Int.init)
    }

    /// A UDP port on 127.0.0.1 below the kernel's ephemeral range that nothing holds right now, for a server that is
    /// stopped and started again on the same port: no socket bound to port 0 (every other test's clients and
    /// servers) is ever given one, so while the server is down no other test's socket can take it. `nil` when none
    /// of 200 tries was free.
    public static func belowEphemeralRange() -> Int? {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let lowest = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32_768
        guard lowest > 10_001 else { return nil }
        for _ in 0..<200 {
            let port = Int.random(in: 10_000..<lowest)
            let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            guard socket >= 0 else { return nil }
            defer { close(socket) }
            if at(port, { Glibc.bind(socket, $0, $1) }) == 0 { return port }
        }
        return nil
    }

    /// Calls `body` (`connect`, `bind`) with the address 127.0.0.1:`port` and its length; returns what it returns.
    public static func at(_ port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
