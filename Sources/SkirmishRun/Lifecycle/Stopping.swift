import Foundation
import ServiceLifecycle

/// How a service was asked to stop.
package enum Stopping: Sendable, Equatable {
    /// Graceful shutdown of the group (a signal, the swarm finishing its plan, a test): run the final steps.
    case graceful
    /// The group was cancelled (another part failed): release what was taken, skip the final steps.
    case cancelled

    /// Waits until the group asks this service to stop, and says how.
    package static func wait() async -> Stopping {
        do {
            try await gracefulShutdown()
            return .graceful
        } catch {
            return .cancelled
        }
    }
}

/// Runs `body` on a thread of its own, off the cooperative pool: for calls that block (a final push, a scrape).
package func onOwnThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
            body()
            done.resume()
        }.start()
    }
}
