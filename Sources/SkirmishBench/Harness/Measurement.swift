/// Times a loop and counts the heap allocations the calling thread made during it.
///
/// Both wall-clock and the thread's own CPU time are kept: on a busy machine the CPU time still says what the code
/// costs, while the wall time says what a caller waited.
package struct Measurement: Sendable, Equatable {
    package var iterations: Int
    package var nanoseconds: Double
    package var cpuNanoseconds: Double
    package var allocations: UInt64

    package init(iterations: Int, nanoseconds: Double, cpuNanoseconds: Double, allocations: UInt64) {
        self.iterations = iterations
        self.nanoseconds = nanoseconds
        self.cpuNanoseconds = cpuNanoseconds
        self.allocations = allocations
    }

    package var nanosecondsPerIteration: Double { nanoseconds / Double(iterations) }
    package var cpuNanosecondsPerIteration: Double { cpuNanoseconds / Double(iterations) }
    package var allocationsPerIteration: Double { Double(allocations) / Double(iterations) }
    /// Iterations per wall-clock second.
    package var perSecond: Double { 1e9 / nanosecondsPerIteration }

    /// Fails unless the allocation counter sees a known allocation, so a "0 allocations" figure can be trusted.
    package static func checkAllocationCounter(_ environment: BenchEnvironment) throws {
        let probe = run(iterations: 10, environment: environment) { i in
            let array = [Int](repeating: i, count: 64)
            precondition(array.count == 64)
        }
        guard probe.allocations >= 10 else {
            throw BenchError("the heap-allocation counter is not active in this binary; allocation figures would lie")
        }
    }

    /// Runs `body` `iterations` times after a warm-up of a tenth as many.
    package static func run(iterations: Int, environment: BenchEnvironment, _ body: (Int) -> Void) -> Measurement {
        for i in 0..<max(1, iterations / 10) { body(i) }
        let clock = ContinuousClock()
        let allocationsBefore = environment.threadAllocations()
        let cpuStart = BenchSystem.threadCPUNanoseconds()
        let start = clock.now
        for i in 0..<iterations { body(i) }
        let elapsed = start.duration(to: clock.now)
        let cpu = BenchSystem.threadCPUNanoseconds() - cpuStart
        let allocations = environment.threadAllocations() - allocationsBefore
        return Measurement(
            iterations: iterations,
            nanoseconds: Double(elapsed.nanoseconds),
            cpuNanoseconds: Double(cpu),
            allocations: allocations)
    }
}

/// Keeps a computed value alive so the optimiser cannot drop the loop that made it.
@inline(never)
package func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
