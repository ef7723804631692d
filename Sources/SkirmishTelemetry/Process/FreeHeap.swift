#if canImport(Glibc)
    import Glibc
#endif

/// The allocator's free memory, given back to the system.
package enum FreeHeap {
    /// Gives free heap memory back to the system (glibc's `malloc_trim(0)`: the free pages of every arena). glibc keeps
    /// what freed buffers held in its arenas, so resident memory shows what the allocator caches, not what the
    /// process uses; a busy process whose work hops between threads spreads that cache over more arenas. A no-op
    /// where the allocator has no such call.
    package static func release() {
        #if canImport(Glibc)
            // `malloc.h` is not part of Swift's Glibc module: look the function up (it is in every glibc).
            typealias Trim = @convention(c) (Int) -> Int32
            guard let symbol = dlsym(nil, "malloc_trim") else { return }
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        #endif
    }
}
