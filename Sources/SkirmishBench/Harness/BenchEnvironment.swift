/// What a benchmark takes from the program that runs it: the heap-allocation counter and where its lines go.
///
/// The allocation counter is a closure rather than an import of `CAllocCounter` because that C target defines
/// `malloc`, `calloc`, `realloc` and `memalign` to count them per thread: linked into this library it would
/// interpose the allocator of every program and test bundle that links `SkirmishBench`, not only of the `skirmish`
/// executable that wants it. So the executable links `CAllocCounter` and passes
/// `{ skirmish_thread_allocations() }` in; tests pass a counting closure (or one that reports nothing, to see a
/// benchmark refuse figures it cannot trust, ``Measurement/checkAllocationCounter(_:)``).
package struct BenchEnvironment: Sendable {
    /// Heap allocations the calling thread has made so far (monotonic per thread).
    package var threadAllocations: @Sendable () -> UInt64
    /// A result line, as soon as it is known (the command prints it on stdout).
    package var output: @Sendable (String) -> Void
    /// A note for the person watching (the command writes it on stderr).
    package var note: @Sendable (String) -> Void

    package init(
        threadAllocations: @escaping @Sendable () -> UInt64,
        output: @escaping @Sendable (String) -> Void = { print($0) },
        note: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.threadAllocations = threadAllocations
        self.output = output
        self.note = note
    }
}
