import Synchronization

/// A value one service publishes once it has started (the server's addresses, the endpoint's URL) and others wait for.
///
/// Services of one group start concurrently; a part that needs another waits here, so the start order follows the
/// dependencies while the group stops the parts in reverse. Waiting ends with `CancellationError` when the waiting
/// task is cancelled (a part that failed cancels the group) and with the part's own error when it could not start.
package final class Ready<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiters: [Int: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// The value, once published; `nil` before (or when the part failed).
    package var current: Value? {
        state.withLock { try? $0.result?.get() }
    }

    /// Publishes `value` to every waiter, present and future; later calls do nothing.
    package func fulfil(_ value: Value) { settle(.success(value)) }

    /// Tells every waiter the part could not start; later calls do nothing.
    package func fail(_ error: any Error) { settle(.failure(error)) }

    /// Waits for the value; throws the part's error, or `CancellationError` when this task is cancelled first.
    package func value() async throws -> Value {
        let id = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let ready = state.withLock { state -> Result<Value, any Error>? in
                    if let result = state.result { return result }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Lets go of the value once no one needs it any more (a swarm whose release stops its loop threads); waiters from
    /// now on get `CancellationError`.
    package func release() {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            state.result = .failure(CancellationError())
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }

    private func settle(_ result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
