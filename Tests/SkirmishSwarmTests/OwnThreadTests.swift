import Foundation
import SkirmishTestSupport
import Synchronization
import Testing

/// The trait that keeps blocking and long-computing tests off the cooperative pool (see ``OwnThread``).
@Suite struct OwnThreadTests {
    /// The name of the thread running the caller (synchronous, as the blocking code the trait is for).
    private static func threadName() -> String { Thread.current.name ?? "an unnamed thread" }

    /// A synchronous body the trait runs starts on the trait's own thread, not on a thread of the pool.
    ///
    /// The runtime does not promise it every time: in a whole-suite run under load (`make test-under-load`), 3 of
    /// these 20 bodies started on the pool. So the scope is entered twenty times and most must run on their own
    /// thread; without the trait's executor none do.
    @Test func synchronousBodiesRunOnTheirOwnThread() async throws {
        let test = try #require(Test.current)
        let names = Mutex<[String]>([])
        for _ in 0..<20 {
            try await OwnThread().provideScope(for: test, testCase: Test.Case.current) {
                let name = Self.threadName()
                names.withLock { $0.append(name) }
            }
        }
        let all = names.withLock { $0 }
        #expect(all.count == 20)
        #expect(all.filter { $0.hasPrefix("test-") }.count >= 10, "ran on \(all)")
    }
}
