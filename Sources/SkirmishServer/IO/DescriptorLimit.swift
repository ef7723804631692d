#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`), which every TCP, WebSocket and HTTP connection takes one of.
enum DescriptorLimit {
    /// The soft limit in force (`nil` when it cannot be read, or is unlimited).
    ///
    /// Read, never raised: a server started as a library must not change its process's limits (`skirmish serve`
    /// raises the soft limit to the hard one itself before it starts the server, and a swarm raises it for its bots).
    static func current() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return limit.rlim_cur == rlim_t.max ? nil : Int(clamping: limit.rlim_cur)
    }
}
