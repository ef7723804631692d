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

    /// Serves `source` (collected on a thread of its own, as the exporter does) until closed.
    static func start(source: any MetricsSource, group: any EventLoopGroup) async throws -> MetricsEndpoint {
        let route = HTTPServer.Route(contentType: "text/plain; version=0.0.4; charset=utf-8") {
            let snapshot = await withCheckedContinuation { (done: CheckedContinuation<MetricsSnapshot, Never>) in
                Thread { done.resume(returning: source.collect()) }.start()
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
