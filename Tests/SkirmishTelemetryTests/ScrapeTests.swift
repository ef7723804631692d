import Foundation
import Testing

@testable import SkirmishTelemetry

/// `skirmish swarm --metrics ADDR` scraped by a real Prometheus, as a team without a push collector runs it.
@Suite(.serialized) struct ScrapeTests {
    /// Prometheus scraping the run's fixed `/metrics` address ends up with the run's final totals: the endpoint
    /// outlives the run until one scrape has read the final figures.
    @Test func aScraperSeesTheFinalFiguresOfARun() throws {
        let port = try Collector.freePort()
        let prometheus = try Collector(.prometheus, scrapeTarget: port)
        let run = try RealRun.run(["--metrics", "127.0.0.1:\(port)", "--metrics-linger", "30"])
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
        let scraped = Collector.poll(timeout: 15) { () -> Double? in
            prometheus.queryValues(query)?.first.flatMap { $0 == Double(sent) ? $0 : nil }
        }
        #expect(scraped == Double(sent), "\(query) → \(prometheus.queryValues(query) ?? []) vs \(sent) in summary.json")
        let matches = prometheus.queryValues(
            "sum(last_over_time(skirmish_matches_started_total{run=\"\(runID)\"}[5m]))")?.first
        #expect(matches == Double(started))
    }

    /// A run nobody scraped does not wait for a scraper that will never come.
    @Test func aRunNobodyScrapedEndsAtOnce() throws {
        let run = try RealRun.run(["--metrics-linger", "120"], script: RealRun.oneBotScript)
        defer { run.remove() }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.ended.timeIntervalSince(run.started) < 90, "the run waited for a scrape nobody would make")
    }
}
