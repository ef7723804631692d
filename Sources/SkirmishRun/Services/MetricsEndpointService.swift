import NIOCore
import ServiceLifecycle
import SkirmishTelemetry

/// The run's `/metrics` endpoint as a ``Service``: listens once the group starts (a taken port throws
/// ``RunError/metricsAddress(_:_:)``), publishes itself in ``started``, and on a graceful shutdown waits — at most
/// ``linger`` — for a scraper to read the final figures the report froze, then closes.
package struct MetricsEndpointService: Service {
    package let source: any MetricsSource
    package let host: String
    package let port: Int
    package let group: any EventLoopGroup
    package let linger: Duration
    package var after: @Sendable () async throws -> Void = {}
    package let started: Ready<MetricsEndpoint>

    package init(
        source: any MetricsSource, host: String, port: Int, group: any EventLoopGroup, linger: Duration,
        started: Ready<MetricsEndpoint> = Ready()
    ) {
        self.started = started
        self.source = source
        self.host = host
        self.port = port
        self.group = group
        self.linger = linger
    }

    package func run() async throws {
        let endpoint: MetricsEndpoint
        do {
            try await after()
        } catch {
            started.fail(error)
            throw error
        }
        do {
            endpoint = try await MetricsEndpoint.start(source: source, host: host, port: port, group: group)
        } catch {
            let failure = RunError.metricsAddress(host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)", error)
            started.fail(failure)
            throw failure
        }
        started.fulfil(endpoint)
        // A scraper that followed the run reads the final figures once more before the endpoint goes away.
        if await Stopping.wait() == .graceful { await endpoint.waitForFinalScrape(limit: linger) }
        try? await endpoint.close()
    }
}
