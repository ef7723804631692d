import Foundation
import Testing

@testable import SkirmishTelemetry

/// The per-loop registry, merging on read, and every export format, checked byte for byte where the format is
/// strict and by parsing where it is structured.
@Suite struct RegistryAndFormatTests {
    static func sample(rtts: [Double] = [0.001, 0.002, 0.004, 0.250], shardLabel: String = "0/1") -> MetricsSnapshot {
        let shard = MetricsShard(constantLabels: Labels(["run": "r1", "shard": shardLabel]))
        let sent = shard.counter(
            SkirmishMetrics.packetsSent, Labels(["game": "puck", "persona": "chaser", "type": "PaddleState"]))
        shard.add(sent, 41)
        shard.add(sent)
        let bots = shard.gauge(SkirmishMetrics.botsConnected, Labels(["game": "puck", "persona": "chaser"]))
        shard.set(bots, 3)
        let rtt = shard.histogram(SkirmishMetrics.rtt, Labels(["game": "puck", "persona": "chaser"]))
        for value in rtts { shard.record(rtt, seconds: value) }
        return shard.snapshot(at: 1_700_000_000_123)
    }

    @Test func prometheusTextHasNoTimestampsAndEndsInANewline() {
        let text = String(decoding: MetricsRenderer.render(Self.sample(), as: .prom), as: UTF8.self)
        #expect(text.hasSuffix("\n"))
        #expect(
            text.contains(
                "skirmish_packets_sent_total{game=\"puck\",persona=\"chaser\",run=\"r1\",shard=\"0/1\",type=\"PaddleState\"} 42\n"
            ))
        #expect(text.contains("# TYPE skirmish_rtt_seconds histogram\n"))
        #expect(
            text.contains(
                "skirmish_rtt_seconds_bucket{game=\"puck\",persona=\"chaser\",run=\"r1\",shard=\"0/1\",le=\"0.002\"} 2\n"
            ))
        #expect(
            text.contains(
                "skirmish_rtt_seconds_bucket{game=\"puck\",persona=\"chaser\",run=\"r1\",shard=\"0/1\",le=\"+Inf\"} 4\n"
            ))
        #expect(
            text.contains("skirmish_rtt_seconds_count{game=\"puck\",persona=\"chaser\",run=\"r1\",shard=\"0/1\"} 4\n"))
        #expect(!text.contains("1700000000123"))
    }

    @Test func victoriaMetricsTextCarriesMillisecondTimestamps() {
        let text = String(decoding: MetricsRenderer.render(Self.sample(), as: .vm), as: UTF8.self)
        let samples = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(!samples.isEmpty)
        #expect(samples.allSatisfy { $0.hasSuffix(" 1700000000123") })
    }

    @Test func openMetricsEndsWithEOFAndNamesCountersWithoutTotalInTheirType() {
        let text = String(decoding: MetricsRenderer.render(Self.sample(), as: .openMetrics), as: UTF8.self)
        #expect(text.hasSuffix("# EOF\n"))
        #expect(text.contains("# TYPE skirmish_packets_sent counter\n"))
        #expect(text.contains("skirmish_packets_sent_total{"))
        #expect(text.contains(" 42 1700000000.123\n"))
    }

    @Test func influxLinesEscapeTagsAndUseMilliseconds() {
        let shard = MetricsShard(constantLabels: Labels(["run": "a run,with=odd chars"]))
        shard.add(shard.counter(SkirmishMetrics.errors, Labels(["kind": "handshake timeout"])), 2)
        let text = String(decoding: MetricsRenderer.render(shard.snapshot(at: 5_000), as: .influx), as: UTF8.self)
        #expect(
            text == "skirmish_errors_total,kind=handshake\\ timeout,run=a\\ run\\,with\\=odd\\ chars value=2i 5000\n")
    }

    @Test func jsonLinesAreValidJSONInVictoriaMetricsImportShape() throws {
        let text = String(decoding: MetricsRenderer.render(Self.sample(), as: .json), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count > 5)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let metric = try #require(object["metric"] as? [String: String])
            #expect(metric["__name__"]?.hasPrefix("skirmish_") == true)
            #expect((object["timestamps"] as? [Int64]) == [1_700_000_000_123])
        }
    }

    @Test func otlpJSONHasCumulativeSumsAndHistogramsWithOneMoreCountThanBounds() throws {
        let bytes = MetricsRenderer.render(Self.sample(), as: .otlp)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let resource = try #require((root["resourceMetrics"] as? [[String: Any]])?.first)
        let scope = try #require((resource["scopeMetrics"] as? [[String: Any]])?.first)
        let metrics = try #require(scope["metrics"] as? [[String: Any]])
        let sent = try #require(metrics.first { $0["name"] as? String == "skirmish_packets_sent_total" })
        let sum = try #require(sent["sum"] as? [String: Any])
        #expect(sum["aggregationTemporality"] as? Int == 2)
        #expect(sum["isMonotonic"] as? Bool == true)
        let point = try #require((sum["dataPoints"] as? [[String: Any]])?.first)
        #expect(point["asInt"] as? String == "42")
        #expect(point["timeUnixNano"] as? String == "1700000000123000000")
        let rtt = try #require(metrics.first { $0["name"] as? String == "skirmish_rtt_seconds" })
        let histogram = try #require((rtt["histogram"] as? [String: Any])?["dataPoints"] as? [[String: Any]])
        let counts = try #require(histogram.first?["bucketCounts"] as? [String])
        let bounds = try #require(histogram.first?["explicitBounds"] as? [Double])
        #expect(counts.count == bounds.count + 1)
        #expect(counts.compactMap { UInt64($0) }.reduce(0, +) == 4)
    }

    @Test func shardsMergeOnReadAndQuantilesComeFromTheMergedDistribution() throws {
        var merged = Self.sample(rtts: [0.001, 0.001, 0.001])
        merged.merge(Self.sample(rtts: [0.100], shardLabel: "0/1"))
        #expect(merged.counterTotal(SkirmishMetrics.packetsSent) == 84)
        #expect(merged.gaugeTotal(SkirmishMetrics.botsConnected) == 6)
        let distribution = try #require(merged.distribution(SkirmishMetrics.rtt))
        #expect(distribution.count == 4)
        let p50 = try #require(distribution.quantile(0.5))
        let max = try #require(distribution.quantile(1))
        #expect(abs(p50 - 0.001) < 0.00002)
        #expect(abs(max - 0.100) < 0.001)
        #expect(merged.counterBreakdown(SkirmishMetrics.packetsSent, by: "type") == ["PaddleState": 84])
    }

    @Test func namesAreSanitisedForCollectors() {
        #expect(MetricFamily.sanitise("9bad-name.with spaces") == "_bad_name_with_spaces")
        #expect(MetricFamily.sanitise("ok:name_1") == "ok:name_1")
    }

    @Test func pushTargetsBuildEachCollectorsEndpoint() throws {
        let gateway = try PushTarget(parsing: "http://127.0.0.1:9091", format: .prom)
        #expect(
            gateway.endpoint(run: "r1", shard: "2/4") == "http://127.0.0.1:9091/metrics/job/skirmish/run/r1/shard/2_4")
        #expect(gateway.method == .put)
        let influx = try PushTarget(parsing: "http://user:pw@127.0.0.1:8086/write?db=skirmish", format: .influx)
        #expect(influx.endpoint(run: "r", shard: "0/1") == "http://127.0.0.1:8086/write?db=skirmish&precision=ms")
        #expect(influx.auth == .basic(user: "user", password: "pw"))
        #expect(throws: PushTargetError.self) { try PushTarget(parsing: "ftp://example", format: .prom) }
    }

    @Test func serialisingTenThousandSeriesIsBounded() {
        let shard = MetricsShard(constantLabels: Labels(["run": "r", "shard": "0/1"]))
        for index in 0..<10_000 {
            shard.add(shard.counter(SkirmishMetrics.errors, Labels(["kind": "k\(index)"])), UInt64(index))
        }
        let snapshot = shard.snapshot(at: 1)
        #expect(snapshot.seriesCount == 10_000)
        let text = MetricsRenderer.render(snapshot, as: .prom)
        #expect(text.count > 10_000 * 40)
    }
}
