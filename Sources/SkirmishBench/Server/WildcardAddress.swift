#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `0.0.0.0:0` as a `sockaddr_in`, for the load generator's socket.
///
/// Built in a file that imports only Glibc: with MemberImportVisibility the compiler attributes the members of
/// `sockaddr_in` to whichever Clang module first loaded the header (NIO's CNIOLinux when a file imports NIO), so
/// the file that touches them must not import NIO.
func wildcardIPv4Address() -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = INADDR_ANY
    return address
}
