import Foundation
import Testing

@testable import SkirmishTelemetry

@Suite struct RendererTests {
    private func text(_ format: MetricsFormat) -> String {
        String(decoding: MetricsRenderer.render(Fixtures.snapshot(), as: format), as: UTF8.self)
    }

    @Test func prometheusTextHasNoTimestampsAndEndsInNewline() throws {
        let body = text(.prom)
        #expect(body.hasSuffix("\n"))
        let line = try #require(body.split(separator: "\n").first { $0.hasPrefix("skirmish_packets_sent_total{") })
        #expect(
            line == """
                skirmish_packets_sent_total{run="t1",shard="0",game="puck",persona="chaser",\
                type="paddle_state",delivery="unreliable"} 1000
                """)
        #expect(body.contains("# TYPE skirmish_rtt_seconds histogram\n"))
        #expect(
            body.contains(
                "skirmish_rtt_seconds_bucket{run=\"t1\",shard=\"0\",game=\"puck\",persona=\"chaser\",le=\"+Inf\"} 100\n"
            ))
        #expect(
            body.contains("skirmish_rtt_seconds_count{run=\"t1\",shard=\"0\",game=\"puck\",persona=\"chaser\"} 100\n"))
    }

    @Test func victoriaMetricsTextCarriesMillisecondTimestamps() {
        let body = text(.vm)
        #expect(body.contains("persona=\"chaser\"} 25 \(Fixtures.startMs + 5_000)\n"))
    }

    @Test func histogramBucketsAreCumulativeAndConsistentWithTheHDRQuantile() throws {
        let snapshot = Fixtures.snapshot()
        let rtt = try #require(snapshot.histogram(SkirmishMetrics.rtt))
        let counts = rtt.cumulativeBucketCounts()
        #expect(counts == counts.sorted())
        #expect(counts.last == 100)
        // Values 10.0 ms … 49.6 ms: nothing at or below 5 ms, everything at or below 50 ms.
        let bounds = rtt.scale.bounds
        #expect(counts[try #require(bounds.firstIndex(of: 0.005))] == 0)
        #expect(counts[try #require(bounds.firstIndex(of: 0.05))] == 100)
        let median = try #require(snapshot.histogramQuantile(SkirmishMetrics.rtt, 0.5))
        #expect(abs(median - 0.0298) < 0.0005)
        #expect(abs(rtt.sum - (0.010 * 100 + 0.0004 * 4950)) < 1e-9)
    }

    @Test func openMetricsEndsInEOFAndNamesCountersWithoutTotal() {
        let body = String(decoding: MetricsRenderer.renderOpenMetrics(Fixtures.snapshot()), as: UTF8.self)
        #expect(body.hasSuffix("# EOF\n"))
        #expect(body.contains("# TYPE skirmish_packets_sent counter\n"))
        #expect(body.contains("delivery=\"unreliable\"} 1000 1763856005.000\n"))
    }

    @Test func influxLinesEscapeTagValuesAndUseIntegerCounters() {
        let metrics = MetricsShard(constantLabels: ["run": "a b,c=d", "shard": ""])
        metrics.add(metrics.counter(SkirmishMetrics.reconnects, ["game": "snap", "persona": "p"]), 3)
        let body = String(decoding: MetricsRenderer.renderInflux(metrics.snapshot(at: 1_000)), as: UTF8.self)
        #expect(body == "skirmish_reconnects_total,run=a\\ b\\,c\\=d,game=snap,persona=p value=3i 1000\n")
    }

    @Test func jsonLinesAreOneImportObjectPerSample() {
        let lines = text(.json).split(separator: "\n")
        let first = lines.first { $0.contains("skirmish_packets_sent_total") }
        #expect(
            first
                == """
                {"metric":{"__name__":"skirmish_packets_sent_total","run":"t1","shard":"0","game":"puck",\
                "persona":"chaser","type":"paddle_state","delivery":"unreliable"},"values":[1000],\
                "timestamps":[1763856005000]}
                """)
        // 3 counters + 1 gauge + (bounds + 1) buckets + sum + count.
        #expect(lines.count == 4 + HistogramScale.seconds.bounds.count + 3)
    }

    @Test func otlpJSONUsesCumulativeSumsAndStringIntegers() {
        let body = text(.otlp)
        #expect(body.hasPrefix("{\"resourceMetrics\":[{\"resource\":"))
        #expect(body.contains("\"aggregationTemporality\":2,\"isMonotonic\":true"))
        #expect(body.contains("\"asInt\":\"1000\""))
        #expect(body.contains("\"timeUnixNano\":\"1763856005000000000\""))
        #expect(body.contains("\"explicitBounds\":[0.0001,0.0002,0.0005,0.001"))
    }

    @Test func jsonFormatsKeepAwkwardLabelValuesIntact() throws {
        let awkward = #"say "hi" \ back\slash é 🏒 </script>"#
        let metrics = MetricsShard(constantLabels: ["run": awkward, "shard": "0"], startTimeMs: Fixtures.startMs)
        metrics.add(metrics.counter(SkirmishMetrics.reconnects, ["game": "snap", "persona": awkward]), 7)
        metrics.record(metrics.histogram(SkirmishMetrics.rtt, ["game": "snap", "persona": awkward]), seconds: 0.02)
        let snapshot = metrics.snapshot(at: Fixtures.startMs + 1_000)

        let lines = MetricsRenderer.renderJSONLines(snapshot).split(separator: 0x0A)
        #expect(lines.count == 1 + HistogramScale.seconds.bounds.count + 3)
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            let metric = try #require(object["metric"] as? [String: String])
            #expect(metric["run"] == awkward)
            #expect(metric["persona"] == awkward)
        }

        let otlp = try #require(
            try JSONSerialization.jsonObject(with: Data(MetricsRenderer.renderOTLP(snapshot))) as? [String: Any])
        let text = String(decoding: try JSONSerialization.data(withJSONObject: otlp), as: UTF8.self)
        #expect(text.contains("skirmish_reconnects_total"))
        let resource = try #require((otlp["resourceMetrics"] as? [[String: Any]])?.first)
        let scope = try #require((resource["scopeMetrics"] as? [[String: Any]])?.first)
        let families = try #require(scope["metrics"] as? [[String: Any]])
        let reconnects = try #require(families.first { $0["name"] as? String == "skirmish_reconnects_total" })
        let point = try #require(((reconnects["sum"] as? [String: Any])?["dataPoints"] as? [[String: Any]])?.first)
        let attributes = try #require(point["attributes"] as? [[String: Any]])
        let persona = attributes.first { $0["key"] as? String == "persona" }
        #expect((persona?["value"] as? [String: String])?["stringValue"] == awkward)
        #expect(point["asInt"] as? String == "7")
    }

    @Test func exportBucketsSurviveMergeAndSubtraction() {
        var early = HistogramValue(scale: .seconds)
        for value in [0.0001, 0.0002, 0.003, 0.05, 200.0] { early.record(value) }
        var late = early
        for value in [0.0001, 0.7] { late.record(value) }
        var merged = early
        merged.merge(late)
        // Bounds are inclusive: 0.0001 lands in the first bucket; 200 s is clamped to 100 s, past every bound.
        #expect(early.cumulativeBucketCounts().first == 1)
        #expect(early.cumulativeBucketCounts().last == 5)
        #expect(merged.cumulativeBucketCounts().last == 12)
        #expect(merged.cumulativeBucketCounts().first == 3)
        let interval = late.subtracting(early)
        #expect(interval.cumulativeBucketCounts().last == 2)
        #expect(interval.cumulativeBucketCounts().first == 1)
        #expect(interval.cumulativeBucketCounts() == interval.cumulativeBucketCounts().sorted())
    }

    @Test(arguments: [
        ("skirmish rtt", "skirmish_rtt"), ("9lives", "_9lives"), ("a:b-c", "a:b_c"), ("", "_"), ("é", "__"),
    ])
    func namesAreSanitised(raw: String, clean: String) {
        #expect(MetricFamily(name: raw, help: "", kind: .counter).name == clean)
    }

    @Test func labelValuesLoseControlCharactersAndAreCapped() {
        let labels: Labels = ["persona": "evil\n\"name\"" + String(repeating: "x", count: 500)]
        let value = labels["persona"] ?? ""
        #expect(!value.contains("\n"))
        #expect(value.utf8.count == Labels.maxValueLength)
    }
}
