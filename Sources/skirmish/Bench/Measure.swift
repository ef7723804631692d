import CAllocCounter

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Times a loop and counts the heap allocations the calling thread made during it.
///
/// Both wall-clock and the thread's own CPU time are kept: on a busy machine the CPU time still says what the code
/// costs, while the wall time says what a caller waited.
struct Measurement {
    var iterations: Int
    var nanoseconds: Double
    var cpuNanoseconds: Double
    var allocations: UInt64

    var nanosecondsPerIteration: Double { nanoseconds / Double(iterations) }
    var cpuNanosecondsPerIteration: Double { cpuNanoseconds / Double(iterations) }
    var allocationsPerIteration: Double { Double(allocations) / Double(iterations) }

    /// Fails unless the allocation counter sees a known allocation, so a "0 allocations" figure can be trusted.
    static func checkAllocationCounter() throws {
        let probe = run(iterations: 10) { i in
            let array = [Int](repeating: i, count: 64)
            precondition(array.count == 64)
        }
        guard probe.allocations >= 10 else {
            throw BenchError("the heap-allocation counter is not active in this binary; allocation figures would lie")
        }
    }

    /// Runs `body` `iterations` times after a warm-up of a tenth as many.
    static func run(iterations: Int, _ body: (Int) -> Void) -> Measurement {
        for i in 0..<max(1, iterations / 10) { body(i) }
        let clock = ContinuousClock()
        let allocationsBefore = skirmish_thread_allocations()
        let cpuStart = threadCPUNanoseconds()
        let start = clock.now
        for i in 0..<iterations { body(i) }
        let elapsed = start.duration(to: clock.now)
        let cpu = threadCPUNanoseconds() - cpuStart
        let allocations = skirmish_thread_allocations() - allocationsBefore
        let (seconds, attoseconds) = elapsed.components
        return Measurement(
            iterations: iterations,
            nanoseconds: Double(seconds) * 1e9 + Double(attoseconds) / 1e9,
            cpuNanoseconds: Double(cpu),
            allocations: allocations)
    }
}

/// CPU time the calling thread has used, in nanoseconds.
func threadCPUNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

/// A benchmark that cannot produce a trustworthy figure.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
