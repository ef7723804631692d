import Foundation
import SkirmishTestSupport
import Testing

/// The trait that keeps blocking and long-computing tests off the cooperative pool (see ``OwnThread``).
@Suite(.ownThread) struct OwnThreadTests {
    /// The name of the thread running the caller (synchronous, as the blocking code the trait is for).
    private static func threadName() -> String { Thread.current.name ?? "an unnamed thread" }

    /// A synchronous test body runs on the trait's thread, not on a thread of the pool.
    @Test func aSynchronousTestRunsOnItsOwnThread() {
        #expect(Self.threadName().hasPrefix("test-"), "ran on \(Self.threadName())")
    }

    /// An async test starts on the trait's thread too; a detached task (which does not inherit the preference) runs
    /// on the pool meanwhile. Where it resumes after an await is not asserted: under load the runtime was seen to
    /// resume it on a thread of the pool (see ``OwnThread``).
    @Test func anAsyncTestStartsOnItsOwnThread() async {
        let here = Self.threadName()
        #expect(here.hasPrefix("test-"), "started on \(here)")
        let elsewhere = await Task.detached { Self.threadName() }.value
        #expect(!elsewhere.hasPrefix("test-"), "the detached task ran on \(elsewhere)")
    }
}
