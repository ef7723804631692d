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

    /// After an await the test is back on its own thread, and a detached task (which does not inherit the preference)
    /// runs on the pool meanwhile: the test's thread is not one of the pool's.
    @Test func anAsyncTestResumesOnItsOwnThread() async {
        let elsewhere = await Task.detached { Self.threadName() }.value
        #expect(!elsewhere.hasPrefix("test-"), "the detached task ran on \(elsewhere)")
        let here = Self.threadName()
        #expect(here.hasPrefix("test-"), "resumed on \(here)")
    }
}
