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
}
