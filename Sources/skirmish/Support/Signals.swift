import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Waits for SIGINT or SIGTERM, once: only `skirmish bench swarm` still uses it, to stop its child processes. The
/// commands with long-lived parts (serve, swarm, soak, practice) run them in a `ServiceGroup` (SkirmishRun) that owns
/// these signals instead.
enum Signals {
    /// Returns the name of the first termination signal received, or `nil` when the waiting task is cancelled.
    static func firstTermination() async -> String? {
        let waiter = SignalWaiter()
        let queue = DispatchQueue(label: "skirmish.signals")
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { waiter.fire(name) }
            source.resume()
            sources.append(source)
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                waiter.arm(continuation)
            }
        } onCancel: {
            waiter.fire(nil)
        }
        // The sources stay installed until the wait is over; a second signal meanwhile ends the process.
        withExtendedLifetime(sources) {}
        return result
    }
}

/// Keeps the signal sources alive while waiting and resumes the continuation exactly once.
private final class SignalWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<String?, Never>?
        var fired = false
        var result: String?
    }

    private let state = Mutex(State())

    func arm(_ continuation: CheckedContinuation<String?, Never>) {
        let resumeNow = state.withLock { state -> Bool in
            guard !state.fired else { return true }
            state.continuation = continuation
            return false
        }
        if resumeNow { continuation.resume(returning: state.withLock { $0.result }) }
    }

    /// Delivers `name` (nil: cancelled) once. A second signal while the first is being handled ends the process at
    /// once, for a user who does not want to wait for the clean stop.
    func fire(_ name: String?) {
        let (pending, again) = state.withLock { state -> (CheckedContinuation<String?, Never>?, Bool) in
            guard !state.fired else { return (nil, name != nil && state.result != nil) }
            state.fired = true
            state.result = name
            defer { state.continuation = nil }
            return (state.continuation, false)
        }
        if again { exit(130) }
        pending?.resume(returning: name)
    }
}
