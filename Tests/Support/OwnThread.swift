import Foundation
import Testing

/// Runs each test of a suite (or one test) on a thread of its own instead of one of the cooperative pool's.
///
/// Swift Testing runs every test function, synchronous or not, on the cooperative pool, which has one thread per core:
/// two on CI. A test that blocks its thread (a socket driver that polls, a wait for a process's output) or computes
/// for seconds (a lock-step match) holds one of the two for as long as it runs; two such tests at once starve every
/// other test in the process, whose awaits then resume only when one of them ends (a whole-suite run on a 2-core
/// machine showed 47 s in which no other test made progress, and the timeouts of the practice and conformance
/// tests expired in it). Under this trait the test's task prefers an executor backed by a dedicated thread, so what
/// it blocks is that thread alone; the kernel shares the cores between it and the pool.
///
/// For tests that block or compute in synchronous code: a synchronous test runs on the thread from start to end, as
/// a rule but not a promise — in a whole-suite run under load, 3 of 20 bodies started on the pool instead, quietly
/// (each test still runs and passes; only the starvation this guards against is back for it). An async test is not
/// sure to run there at all (under load the runtime ran one on the pool, after an await and once from its start), so
/// it gains nothing and does not belong under it.
///
/// Everything the test's task runs goes to the one thread, child tasks included: a test that blocks while work it
/// started must make progress on that thread (a child task, or a server started inside the test that answers
/// through tasks) waits for its own timeout, and does not belong under it (the reference server's `/metrics` fetched
/// by a blocking client did exactly that). Unstructured tasks the test starts can land there too, so a suite that
/// runs a swarm inside the test (ENet's and DDNet's swarm suites) is not put under it.
public struct OwnThread: TestTrait, SuiteTrait, TestScoping {
    /// The trait (see ``Trait/ownThread``).
    public init() {}

    /// On a suite, the trait applies to each of its tests.
    public var isRecursive: Bool { true }

    /// Each test case gets a thread; a suite as a whole needs none.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThread? {
        testCase == nil ? nil : self
    }

    /// Runs the test case in a task that starts on a fresh ``ThreadExecutor`` (and prefers it), finished afterwards.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = ThreadExecutor(name: "test-\(test.name.prefix(10))")
        defer { executor.finish() }
        // A child task that starts on the executor (and sees the test's task-locals, so its issues are the test's):
        // `withTaskExecutorPreference` alone left a synchronous test on the pool in a whole-suite run under load.
        try await withoutActuallyEscaping(function) { function in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask(executorPreference: executor) { try await function() }
                try await group.waitForAll()
            }
        }
    }
}

extension Trait where Self == OwnThread {
    /// The test runs on a thread of its own, never holding one of the cooperative pool's (see ``OwnThread``).
    public static var ownThread: OwnThread { OwnThread() }
}

/// A task executor that runs its jobs, in order, on one thread it starts; after ``finish()`` the thread ends once its
/// queue is empty, and a job that still arrives (an unstructured task the test left behind) runs on a thread of its
/// own, so nothing waits forever.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [UnownedJob] = []
    private var finishing = false
    private var running = true

    /// Starts the thread, named `name` (as `ps` and debuggers show it).
    public init(name: String) {
        Thread { [self] in serve(name: name) }.start()
    }

    /// Queues `job` for the thread (or, once the thread has ended, runs it on a thread of its own).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        guard running else {
            condition.unlock()
            let executor = asUnownedTaskExecutor()
            Thread.detachNewThread { job.runSynchronously(on: executor) }
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once it has run every job queued so far.
    public func finish() {
        condition.lock()
        finishing = true
        condition.signal()
        condition.unlock()
    }

    private func serve(name: String) {
        // Named from inside: a name given before start does not reach the system thread on Linux.
        Thread.current.name = name
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty, !finishing { condition.wait() }
            guard !jobs.isEmpty else {
                running = false
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
