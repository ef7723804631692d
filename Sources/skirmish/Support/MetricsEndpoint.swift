import Foundation
import NIOCore
import SkirmishNet
import SkirmishSwarm
import SkirmishTelemetry

/// The embedded default: while a run lasts, its metrics are served as Prometheus text at a loopback `/metrics`,
/// so a local Prometheus can scrape a run with no collector set up.
struct MetricsEndpoint: Sendable {
    let server: HTTPServer

    var url: String { "http://127.0.0.1:\(server.localAddress.port ?? 0)/metrics" }

    /// Scrapes are collected one at a time on this queue's thread, off the event loops (collecting waits on each of
    /// them): a burst of scrapes queues up instead of starting a thread each.
    private static let collector = DispatchQueue(label: "skirmish.metrics-endpoint")

    /// Serves `source` (collected off the event loops, as the exporter does) until closed.
    static func start(source: any MetricsSource, group: any EventLoopGroup) async throws -> MetricsEndpoint {
        let route = HTTPServer.Route(contentType: "text/plain; version=0.0.4; charset=utf-8") {
            let snapshot = await withCheckedContinuation { (done: CheckedContinuation<MetricsSnapshot, Never>) in
                collector.async { done.resume(returning: source.collect()) }
            }
            return MetricsRenderer.render(snapshot, as: .prom)
        }
        let server = try await HTTPServer.bind(
            host: "127.0.0.1", port: 0, group: group, routes: ["/metrics": route], webSocketPath: nil,
            onWebSocket: nil)
        return MetricsEndpoint(server: server)
    }

    func close() async throws { try await server.close() }
}
