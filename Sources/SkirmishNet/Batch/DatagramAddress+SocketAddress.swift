import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Conversions to and from NIO's `SocketAddress`, through the raw `sockaddr` bytes (see ``DatagramAddress``).
extension DatagramAddress {
    /// The address of an IPv4 or IPv6 `SocketAddress`; `nil` for a Unix socket path.
    package init?(_ address: SocketAddress) {
        let parsed: DatagramAddress?
        switch address {
        case .v4(let v4): parsed = withUnsafeBytes(of: v4.address) { DatagramAddress(rawSockaddr: $0) }
        case .v6(let v6): parsed = withUnsafeBytes(of: v6.address) { DatagramAddress(rawSockaddr: $0) }
        case .unixDomainSocket: parsed = nil
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The same address as a NIO `SocketAddress` (a heap allocation: for the rare paths only).
    package var socketAddress: SocketAddress {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: 32, alignment: 8)
        defer { raw.deallocate() }
        _ = write(into: raw.baseAddress!)
        return version == 4
            ? SocketAddress(raw.loadUnaligned(as: sockaddr_in.self), host: "")
            : SocketAddress(raw.loadUnaligned(as: sockaddr_in6.self), host: "")
    }
}
