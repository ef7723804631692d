import Dispatch
import Foundation
import Synchronization

/// Pushes metrics to collectors on its own thread: periodically, and once more at shutdown.
///
/// Nothing here runs on an event loop: the exporter reads the swarm through ``MetricsSource`` (which may block),
/// renders, and sends with libcurl. Counters are cumulative, so the newest snapshot supersedes any unsent one — the
/// queue per collector is one snapshot deep, bounded by construction, and a lost push loses nothing. A failed push is
/// retried with capped exponential backoff and full jitter within the interval; every failure is counted by target
/// and reason and the last one kept for the summary.
public final class Exporter: Sendable {
    public let targets: [PushTarget]
    public let interval: Duration
    private let source: any MetricsSource
    private let run: String
    private let shard: String
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    private struct State {
        var stats = ExporterStats()
        var stopping = false
        var finalPush = true
        var started = false
    }

    public init(
        targets: [PushTarget], source: any MetricsSource, interval: Duration = .seconds(5), runID: String,
        shard: String
    ) {
        self.targets = targets
        self.source = source
        self.interval = interval
        run = runID
        self.shard = shard
    }

    /// What the exporter has done so far.
    public var stats: ExporterStats { state.withLock { $0.stats } }

    /// Starts the exporter's thread; the first push happens after one interval.
    public func start() {
        let alreadyStarted = state.withLock { state -> Bool in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { return }
        let thread = Thread { [self] in loop() }
        thread.name = "skirmish-exporter"
        thread.start()
    }

    /// Stops the thread after a final push (unless told otherwise); waits at most `timeout` for it.
    public func stop(finalPush: Bool = true, timeout: Duration = .seconds(15)) {
        let running = state.withLock { state -> Bool in
            state.stopping = true
            state.finalPush = finalPush
            return state.started
        }
        guard running else { return }
        wake.signal()
        let nanos = timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
        _ = finished.wait(timeout: .now() + .nanoseconds(Int(nanos)))
    }

    /// Pushes once now, on the calling thread (the thread loop and tests use it).
    public func pushOnce(posters: inout [CurlPosterBox]) {
        let snapshot = source.collect()
        for (index, target) in targets.enumerated() {
            let body = MetricsRenderer.render(snapshot, as: target.format)
            push(
                body, to: target, with: posters[index].poster,
                deadline: .now() + .seconds(Int(interval.components.seconds)))
        }
    }

    private func loop() {
        var posters = targets.map { _ in CurlPosterBox() }
        let intervalNanos = Int(
            interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
        while true {
            _ = wake.wait(timeout: .now() + .nanoseconds(intervalNanos))
            let (stopping, finalPush) = state.withLock { ($0.stopping, $0.finalPush) }
            if stopping {
                if finalPush { pushOnce(posters: &posters) }
                break
            }
            pushOnce(posters: &posters)
        }
        finished.signal()
    }

    private func push(_ body: [UInt8], to target: PushTarget, with poster: CurlPoster, deadline: DispatchTime) {
        let url = target.endpoint(run: run, shard: shard)
        var attempt = 0
        while true {
            attempt += 1
            let outcome: String?
            do {
                let response = try poster.send(body, to: target, url: url)
                if (200..<300).contains(response.status) {
                    outcome = nil
                } else {
                    let detail = String(response.body.prefix(300)).trimmingCharacters(in: .whitespacesAndNewlines)
                    outcome = "HTTP \(response.status)" + (detail.isEmpty ? "" : ": \(detail)")
                }
            } catch {
                outcome = error.description
            }
            guard let failure = outcome else {
                state.withLock { $0.stats.pushes &+= 1 }
                return
            }
            let stopping = state.withLock { state -> Bool in
                state.stats.failures &+= 1
                state.stats.failuresByTarget[target.url, default: 0] &+= 1
                state.stats.lastError = "\(target.url): \(failure)"
                return state.stopping
            }
            // A 4xx answer will not change on retry (bad payload, bad auth); a stopping exporter tries once more.
            let clientError = failure.hasPrefix("HTTP 4")
            let backoff = min(0.1 * pow(2, Double(attempt - 1)), 2.0) * Double.random(in: 0.5...1)
            if clientError || attempt >= 4 || (stopping && attempt >= 2)
                || DispatchTime.now() + backoff >= deadline
            {
                state.withLock { $0.stats.dropped &+= 1 }
                return
            }
            Thread.sleep(forTimeInterval: backoff)
        }
    }
}

/// Holds one target's curl handle for the exporter thread.
public final class CurlPosterBox {
    let poster = CurlPoster()
    public init() {}
}

/// What the exporter did: shown in the run summary.
public struct ExporterStats: Sendable, Hashable {
    public var pushes: UInt64 = 0
    public var failures: UInt64 = 0
    /// Pushes given up after their retries (the next push carries the same cumulative values).
    public var dropped: UInt64 = 0
    public var failuresByTarget: [String: UInt64] = [:]
    public var lastError: String?

    public init() {}
}
