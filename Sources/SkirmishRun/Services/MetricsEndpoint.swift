import Foundation
import NIOCore
import SkirmishNet
import SkirmishSwarm
import SkirmishTelemetry
import Synchronization

/// The embedded default: while a run lasts, its metrics are served as Prometheus text at `/metrics` (loopback, or
/// the `--metrics` address), so a Prometheus can scrape a run with no collector set up.
///
/// At the end the endpoint serves the run's final figures and stays up until one more scrape has read them (or
/// ``linger`` passes), so a scraper sees where the run ended rather than where it was one interval earlier.
package struct MetricsEndpoint: Sendable {
    package let server: HTTPServer
    private let state: SharedState

    package var url: String {
        let host = server.localAddress.ipAddress ?? "127.0.0.1"
        let shown = host.contains(":") ? "[\(host)]" : host
        return "http://\(shown):\(server.localAddress.port ?? 0)/metrics"
    }

    /// Scrapes are collected one at a time on this queue's thread, off the event loops (collecting waits on each of
    /// them): a burst of scrapes queues up instead of starting a thread each.
    private static let collector = DispatchQueue(label: "skirmish.metrics-endpoint")

    /// Scrapes so far and, once the run ended, its final figures and whoever waits for them to be read.
    private final class SharedState: Sendable {
        struct Inner {
            var scrapes = 0
            /// The final figures, rendered once so the last scrapes are answered at once.
            var final: [UInt8]?
            var finalRead = false
            var timedOut = false
            var waiter: CheckedContinuation<Void, Never>?
        }

        let inner = Mutex(Inner())
    }

    /// Serves `source` (collected off the event loops, as the exporter does) on `host:port` until closed.
    package static func start(
        source: any MetricsSource, host: String = "127.0.0.1", port: Int = 0, group: any EventLoopGroup
    ) async throws -> MetricsEndpoint {
        let state = SharedState()
        let route = HTTPServer.Route(contentType: "text/plain; version=0.0.4; charset=utf-8") {
            let final = state.inner.withLock { $0.final }
            let body: [UInt8]
            if let final {
                body = final
            } else {
                let snapshot = await withCheckedContinuation { (done: CheckedContinuation<MetricsSnapshot, Never>) in
                    collector.async { done.resume(returning: source.collect()) }
                }
                body = MetricsRenderer.render(snapshot, as: .prom)
            }
            let waiter = state.inner.withLock { inner -> CheckedContinuation<Void, Never>? in
                inner.scrapes += 1
                guard final != nil else { return nil }
                inner.finalRead = true
                defer { inner.waiter = nil }
                return inner.waiter
            }
            waiter?.resume()
            return body
        }
        let server = try await HTTPServer.bind(
            host: host, port: port, group: group, routes: ["/metrics": route], webSocketPath: nil, onWebSocket: nil)
        return MetricsEndpoint(server: server, state: state)
    }

    /// From now on every scrape gets `snapshot`, the run's final figures.
    package func freeze(_ snapshot: MetricsSnapshot) {
        let body = MetricsRenderer.render(snapshot, as: .prom)
        state.inner.withLock { $0.final = body }
    }

    /// Waits until a scrape has read the final figures, at most `limit`; returns at once when nothing scraped the
    /// endpoint during the run (no scraper will come) or the final figures were already read.
    package func waitForFinalScrape(limit: Duration) async {
        let timeout = Task {
            try? await Task.sleep(for: limit)
            let waiter = state.inner.withLock { inner -> CheckedContinuation<Void, Never>? in
                inner.timedOut = true
                defer { inner.waiter = nil }
                return inner.waiter
            }
            waiter?.resume()
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let resumeNow = state.inner.withLock { inner -> Bool in
                if inner.scrapes == 0 || inner.finalRead || inner.final == nil || inner.timedOut { return true }
                inner.waiter = done
                return false
            }
            if resumeNow { done.resume() }
        }
        timeout.cancel()
    }

    package func close() async throws { try await server.close() }
}
