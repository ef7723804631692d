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

    /// CPU time the calling thread has used, in seconds (0 when the clock cannot be read).
    ///
    /// Here rather than beside its callers because it reads `timespec`'s fields: with MemberImportVisibility the
    /// compiler attributes them to whichever module first loaded the C header, and in a module that also imports
    /// NIO or swift-log that attribution changes with the build (debug built, release did not).
    package static func threadCPUSeconds() -> Double {
        var spec = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec) == 0 else { return 0 }
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
