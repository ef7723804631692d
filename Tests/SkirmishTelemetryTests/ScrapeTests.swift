import Foundation
import Testing

@testable import SkirmishTelemetry

/// `skirmish swarm --metrics ADDR` scraped by a real Prometheus, as a team without a push collector runs it.
@Suite(.serialized) struct ScrapeTests {
    /// Prometheus scraping the run's fixed `/metrics` address ends up with the run's final totals: the endpoint
    /// outlives the run until one scrape has read the final figures.
    @Test func aScraperSeesTheFinalFiguresOfARun() async throws {
        let port = try Collector.freePort()
        // A generous scrape timeout: on a loaded machine a one-second one can expire on the run's final answer.
        let prometheus = try await Collector(.prometheus, scrapeTarget: port, scrapeSeconds: 3)
        let run = try await RealRun.run(["--metrics", "127.0.0.1:\(port)", "--metrics-linger", "30"])
        defer { run.remove() }
        try #require(run.status == 0, "exit \(run.status): \(run.stderr)")
        #expect(run.stderr.contains("metrics at http://127.0.0.1:\(port)/metrics"), "\(run.stderr)")
        let summary = try run.summary()
        let runID = try #require(summary["run"] as? String)
        let sent = try #require((summary["packets"] as? [String: Any])?["sent"] as? Int)
        let started = try #require((summary["matchesStarted"] as? Int))
        #expect(sent > 0)
        // The target is gone once the run ends, so Prometheus marks its series stale: read the last scraped values.
        let query = "sum(last_over_time(skirmish_packets_sent_total{run=\"\(runID)\"}[5m]))"
        let scraped = await Collector.poll(timeout: 15) { () -> Double? in
            prometheus.queryValues(query)?.first.flatMap { $0 == Double(sent) ? $0 : nil }
        }
        let targets = prometheus.get("/api/v1/targets")?.body ?? ""
        let took = run.ended.timeIntervalSince(run.started)
        #expect(
            scraped == Double(sent),
            "\(query) → \(prometheus.queryValues(query) ?? []) vs \(sent); run took \(took) s; targets: \(targets)")
        let matches = prometheus.queryValues(
            "sum(last_over_time(skirmish_matches_started_total{run=\"\(runID)\"}[5m]))")?.first
        #expect(matches == Double(started))
    }

    /// A run nobody scraped does not wait for a scraper that will never come.
    @Test func aRunNobodyScrapedEndsAtOnce() async throws {
        let run = try await RealRun.run(["--metrics-linger", "120"], script: RealRun.oneBotScript)
        defer { run.remove() }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.ended.timeIntervalSince(run.started) < 90, "the run waited for a scrape nobody would make")
    }

    /// Against an external server (`skirmish serve`), `--server-metrics` reads its `/metrics` at the end: the
    /// summary and the report carry the server's own figures, marked as scraped.
    @Test func anExternalServersFiguresAreScrapedIntoTheReport() async throws {
        let server = try await HostServer()
        defer { server.stop() }
        let metrics = "http://127.0.0.1:\(server.httpPort)/metrics"
        let run = try await RealRun.run([
            "--target", "udp://127.0.0.1:\(server.udpPort)", "--server-metrics", metrics,
        ])
        defer { run.remove() }
        try #require(run.status == 0, "\(run.stderr)")
        let figures = try #require(try run.summary()["server"] as? [String: Any], "no server figures")
        #expect(figures["scrapedFrom"] as? String == metrics)
        #expect((figures["packetsReceived"] as? Int ?? 0) > 0)
        #expect((figures["ticks"] as? Int ?? 0) > 0)
        #expect(figures["tickDurationP99"] as? Double != nil)
        let report = try String(contentsOf: run.out.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(report.contains("Server (scraped from \(metrics))"))
    }

    /// A server page read back gives the figures the snapshot it was rendered from gives (loop time aside: the page
    /// has buckets, so its percentiles are interpolated like `histogram_quantile`).
    @Test func serverFiguresReadBackFromPrometheusText() throws {
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        shard.add(shard.counter(SkirmishMetrics.serverTicks), 600)
        shard.add(shard.counter(SkirmishMetrics.serverPacketsReceived, ["type": "Hello"]), 40)
        shard.add(shard.counter(SkirmishMetrics.serverPacketsReceived, ["type": "PaddleState"]), 2_000)
        shard.add(shard.counter(SkirmishMetrics.serverRejectedPackets, ["reason": "bad \"magic\", really"]), 3)
        shard.add(shard.counter(SkirmishMetrics.serverMatchesStarted, ["game": "puck"]), 4)
        shard.set(shard.gauge(SkirmishMetrics.serverSessions), 12)
        let ticks = shard.histogram(SkirmishMetrics.serverTickSeconds)
        for step in 0..<1_000 { shard.record(ticks, seconds: 0.0001 + Double(step) * 0.000_001) }
        let sent = shard.histogram(SkirmishMetrics.serverMatchBytesPerSecond, ["game": "puck", "direction": "sent"])
        let received = shard.histogram(
            SkirmishMetrics.serverMatchBytesPerSecond, ["game": "puck", "direction": "received"])
        for step in 0..<100 {
            shard.record(sent, value: 4_800 + Double(step))
            shard.record(received, value: 1_800 + Double(step))
        }
        let snapshot = shard.snapshot(at: 0)
        let direct = try #require(ServerFigures(snapshot: snapshot))
        let page = String(decoding: MetricsRenderer.render(snapshot, as: .prom), as: UTF8.self)
        let read = try #require(ServerFigures(prometheusText: page))
        #expect(read.ticks == 600 && read.packetsReceived == 2_040 && read.sessions == 12)
        #expect(read.rejections == direct.rejections && read.rejections["bad \"magic\", really"] == 3)
        #expect(read.matchesByGame["puck"] == [4, 0, 0])
        let p99 = try #require(read.tickDurationP99)
        #expect(p99 > 0.0005 && p99 <= 0.002, "interpolated p99 \(p99)")
        // Per-match bandwidth: the count and the mean exactly, the median inside its bucket (2 to 5 KB/s), no max.
        let match = try #require(read.matchBytesPerSecond?["puck"])
        let exact = try #require(direct.matchBytesPerSecond?["puck"])
        #expect(match.sent.samples == 100 && match.received.samples == 100)
        #expect(match.sent.mean == exact.sent.mean && match.received.mean == exact.received.mean)
        let median = try #require(match.sent.p50)
        #expect(median > 2_000 && median <= 5_000, "interpolated p50 \(median)")
        #expect(match.sent.max == nil && exact.sent.max != nil)
        #expect(read.matchBytesPerSecond?["snap"] == nil)
        #expect(ServerFigures(prometheusText: "# nothing here\nup 1\n") == nil)
    }
}
