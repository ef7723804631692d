import Foundation
import Testing

@testable import SkirmishTelemetry

/// `metrics.json` (a snapshot written and read back exactly) and the merged timeline of a sharded run: what
/// `skirmish merge` reads and draws.
@Suite struct SnapshotFileTests {
    static func snapshot(shard: String, rtts: [Double], errors: UInt64, bots: Double) -> MetricsSnapshot {
        let metrics = MetricsShard(constantLabels: ["run": "r", "shard": shard], startTimeMs: 1_000)
        let rtt = metrics.histogram(SkirmishMetrics.rtt, ["persona": "chaser", "game": "puck"])
        for value in rtts { metrics.record(rtt, seconds: value) }
        metrics.add(metrics.counter(SkirmishMetrics.errors, ["persona": "chaser", "kind": "silence_timeout"]), errors)
        metrics.set(metrics.gauge(SkirmishMetrics.botsConnected, ["persona": "chaser"]), bots)
        return metrics.snapshot(at: 5_000)
    }

    @Test("a snapshot written as JSON reads back with every series, label and HDR count")
    func roundTrip() throws {
        let rtts = (1...500).map { Double($0) * 0.000_173 }
        let original = Self.snapshot(shard: "0/2", rtts: rtts, errors: 7, bots: 3)
        let data = try JSONEncoder().encode(original)
        let read = try JSONDecoder().decode(MetricsSnapshot.self, from: data)
        #expect(read.timestampMs == original.timestampMs)
        #expect(read.startTimeMs == original.startTimeMs)
        #expect(read.series.map(\.labels) == original.series.map(\.labels))
        #expect(read.series.map(\.family) == original.series.map(\.family))
        #expect(read.counterTotal(SkirmishMetrics.errors) == 7)
        #expect(read.gaugeTotal(SkirmishMetrics.botsConnected) == 3)
        let before = try #require(original.histogram(SkirmishMetrics.rtt))
        let after = try #require(read.histogram(SkirmishMetrics.rtt))
        #expect(after.count == 500)
        for q in [0.5, 0.9, 0.99, 0.999, 1] { #expect(after.quantile(q) == before.quantile(q), "q \(q)") }
        #expect(after.cumulativeBucketCounts() == before.cumulativeBucketCounts())
        // The rendering a collector would get is the same, byte for byte.
        #expect(MetricsRenderer.renderOpenMetrics(read) == MetricsRenderer.renderOpenMetrics(original))
    }

    @Test("two shards' snapshots merged read back as one process's, to the HDR count")
    func mergedShardsEqualOneProcess() throws {
        let all = (1...900).map { Double(($0 * 7_919) % 1_000 + 1) * 0.000_05 }
        var merged = try JSONDecoder().decode(
            MetricsSnapshot.self,
            from: JSONEncoder().encode(Self.snapshot(shard: "s", rtts: Array(all[..<400]), errors: 2, bots: 1)))
        merged.merge(
            try JSONDecoder().decode(
                MetricsSnapshot.self,
                from: JSONEncoder().encode(Self.snapshot(shard: "s", rtts: Array(all[400...]), errors: 3, bots: 2))))
        let single = Self.snapshot(shard: "s", rtts: all, errors: 5, bots: 3)
        for q in [0.5, 0.95, 0.99, 1] {
            #expect(
                merged.histogramQuantile(SkirmishMetrics.rtt, q) == single.histogramQuantile(SkirmishMetrics.rtt, q))
        }
        #expect(merged.counterTotal(SkirmishMetrics.errors) == 5)
    }

    @Test(
        "a metrics file whose series names no family or holds another kind's value is refused",
        arguments: [
            #"{"timestampMs":0,"startTimeMs":0,"families":[],"series":[{"family":0,"labels":[],"counter":1}]}"#,
            #"{"timestampMs":0,"startTimeMs":0,"families":[{"name":"a","help":"","kind":"gauge","labelNames":[]}],"series":[{"family":0,"labels":[],"counter":1}]}"#,
            #"{"timestampMs":0,"startTimeMs":0,"families":[{"name":"a","help":"","kind":"summary","labelNames":[]}],"series":[]}"#,
            #"{"timestampMs":0,"startTimeMs":0,"families":[{"name":"a","help":"","kind":"counter","labelNames":[]}],"series":[{"family":0,"labels":[["x"]],"counter":1}]}"#,
            // A scale no histogram of ours has: its HDR span would overflow (a crash, before it was checked).
            #"{"timestampMs":0,"startTimeMs":0,"families":[{"name":"a","help":"","kind":"histogram","labelNames":[],"resolution":1e6,"highest":1e30,"bounds":[1]}],"series":[]}"#,
            #"{"timestampMs":0,"startTimeMs":0,"families":[{"name":"a","help":"","kind":"histogram","labelNames":[],"resolution":-1,"highest":10,"bounds":[1]}],"series":[]}"#,
        ])
    func malformed(_ text: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(MetricsSnapshot.self, from: Data(text.utf8)) }
    }

    @Test("a merged timeline adds bots, rates and counts, keeps the highest percentile, and lets an ended shard go")
    func mergedTimeline() {
        func timeline(_ points: [(Double, Double, Double, UInt64)]) -> RunTimeline {
            var timeline = RunTimeline()
            for (t, bots, rtt, errors) in points {
                timeline.points.append(
                    RunTimeline.Point(
                        t: t, bots: bots, packetsPerSecond: bots * 10, rttP50: rtt, rttP95: rtt, rttP99: rtt,
                        desyncs: 0, errors: errors))
            }
            return timeline
        }
        let long = timeline([(1.02, 4, 0.010, 0), (2.01, 4, 0.012, 1), (3.0, 4, 0.011, 1)])
        let short = timeline([(0.98, 2, 0.020, 0), (1.97, 2, 0.005, 2)])
        let merged = RunTimeline.merging([long, short])
        #expect(merged.points.map(\.t) == [1, 2, 3])
        #expect(merged.points.map(\.bots) == [6, 6, 4])
        #expect(merged.points.map(\.packetsPerSecond) == [60, 60, 40])
        #expect(merged.points.map(\.rttP99) == [0.020, 0.012, 0.011])
        // The short shard ended after 2 s: its 2 errors stay counted, its bots leave.
        #expect(merged.points.map(\.errors) == [0, 3, 3])
        #expect(RunTimeline.merging([]).points.isEmpty)
        // A point no run has is left out, not walked to second by second.
        let hostile = timeline([(1, 1, 0.01, 0), (1e12, 1, 0.01, 0), (-.infinity, 1, 0.01, 0)])
        #expect(RunTimeline.merging([hostile]).points.map(\.t) == [1])
    }
}
