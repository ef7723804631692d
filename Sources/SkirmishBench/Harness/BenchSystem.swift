import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// What the network benchmarks ask of the operating system: a thread's CPU time, the process's resident memory and
/// the load average, and event loops pinned to a core.
package enum BenchSystem {
    /// Cores this process may run on.
    package static var onlineCores: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// CPU time the calling thread has used, in nanoseconds (user + system).
    package static func threadCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// CPU time the whole process has used, in nanoseconds (user + system, every thread).
    package static func processCPUNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Resident memory of this process in bytes, from `/proc/self/statm` (0 when unreadable).
    package static func residentBytes() -> Int {
        guard let file = fopen("/proc/self/statm", "r") else { return 0 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        guard fgets(&line, Int32(line.count), file) != nil else { return 0 }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The one-minute load average, to print beside figures that other processes may have disturbed.
    package static func loadAverage() -> Double {
        var loads = [Double](repeating: 0, count: 3)
        return getloadavg(&loads, 3) >= 1 ? loads[0] : -1
    }

    /// This process's monotonic clock in nanoseconds (the clock of `NIODeadline` uptime).
    package static func monotonic() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// A duration in seconds.
    package static func seconds(_ duration: Duration) -> Double {
        duration.seconds
    }

    /// One event loop pinned to `core` (on Linux; elsewhere unpinned), so a benchmark's two sides do not share one.
    package static func pinnedGroup(core: Int) -> MultiThreadedEventLoopGroup {
        #if os(Linux)
            MultiThreadedEventLoopGroup(pinnedCPUIDs: [core])
        #else
            MultiThreadedEventLoopGroup(numberOfThreads: 1)
        #endif
    }
}
