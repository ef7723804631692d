import Foundation

/// Runs blocking work (waiting for a child process) on a thread of its own and awaits it.
///
/// Swift Testing runs every suite of the test process side by side on the cooperative pool, which has one thread
/// per core: two on CI. A test that blocks one of them for a whole `skirmish swarm` run stalls every other async
/// test in the process (their awaits never resume) — the in-process swarm tests then see nothing happen for a
/// minute. Waiting here costs a thread, not the pool.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
