import ServiceLifecycle
import Synchronization

/// Runs a command's ``ServiceGroup`` and lets others stop it gracefully (tests, as SIGTERM would), even before it runs.
package final class GroupHandle: Sendable {
    private let state = Mutex<(group: ServiceGroup?, shutdownRequested: Bool)>((nil, false))

    package init() {}

    /// Runs `group` to its end; a shutdown requested earlier applies at once.
    package func run(_ group: ServiceGroup) async throws {
        let requested = state.withLock { state -> Bool in
            state.group = group
            return state.shutdownRequested
        }
        // Once the group ended it is let go (its services refer back to whoever owns this handle).
        defer { state.withLock { $0.group = nil } }
        if requested { await group.triggerGracefulShutdown() }
        try await group.run()
    }

    /// Stops the group gracefully: every part in reverse start order, with its final steps.
    package func triggerGracefulShutdown() async {
        let group = state.withLock { state -> ServiceGroup? in
            state.shutdownRequested = true
            return state.group
        }
        await group?.triggerGracefulShutdown()
    }
}
