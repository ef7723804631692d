#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Unix time for metric timestamps (collectors want wall time; everything else in Skirmish uses monotonic time).
public enum WallTime {
    /// Milliseconds since the Unix epoch, from the real-time clock (it can step; never use it for durations).
    public static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
