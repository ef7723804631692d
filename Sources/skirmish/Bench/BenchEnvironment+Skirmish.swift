import CAllocCounter
import SkirmishBench

extension BenchEnvironment {
    /// This executable's: `CAllocCounter`'s per-thread count (its `malloc` interposer is linked here and only
    /// here), results printed on stdout and notes on stderr.
    static let skirmish = BenchEnvironment(
        threadAllocations: { skirmish_thread_allocations() },
        output: { print($0) },
        note: { Console.note($0) })
}
