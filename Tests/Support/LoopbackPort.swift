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
}
