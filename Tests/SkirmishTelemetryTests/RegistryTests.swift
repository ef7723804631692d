import Foundation
import Testing

@testable import SkirmishTelemetry

@Suite struct RegistryTests {
    @Test func resolvingTheSameSeriesTwiceGivesTheSameID() {
        let metrics = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        let a = metrics.counter(SkirmishMetrics.errors, ["game": "puck", "persona": "p", "kind": "timeout"])
        let b = metrics.counter(SkirmishMetrics.errors, ["kind": "timeout", "persona": "p", "game": "puck"])
        let c = metrics.counter(SkirmishMetrics.errors, ["game": "puck", "persona": "p", "kind": "decode"])
        #expect(a == b)
        #expect(a != c)
        metrics.add(a)
        metrics.add(b, 2)
        #expect(metrics.value(a) == 3)
        #expect(metrics.value(c) == 0)
    }

    @Test func labelsFollowTheFamilyOrderAfterTheConstantLabels() throws {
        let metrics = MetricsShard(constantLabels: ["run": "r", "shard": "3"])
        // Misspelled and missing labels: the series keeps the family's shape.
        metrics.add(
            metrics.counter(SkirmishMetrics.packetsSent, ["delivery": "reliable", "gmae": "x", "game": "snap"]))
        let series = try #require(metrics.snapshot(at: 0).series.first)
        #expect(series.labels.names == ["run", "shard", "game", "persona", "type", "delivery"])
        #expect(series.labels.values == ["r", "3", "snap", "", "", "reliable"])
    }

    @Test func mergingShardsAddsCountersGaugesAndHistograms() throws {
        let constant: Labels = ["run": "r", "shard": "0"]
        let labels: Labels = ["game": "puck", "persona": "p"]
        var merged = MetricsSnapshot()
        for loop in 0..<4 {
            let metrics = MetricsShard(constantLabels: constant, startTimeMs: 100 + Int64(loop))
            metrics.add(metrics.counter(SkirmishMetrics.bytesSent, labels), 10)
            metrics.set(metrics.gauge(SkirmishMetrics.botsConnected, labels), 2.5)
            let rtt = metrics.histogram(SkirmishMetrics.rtt, labels)
            for sample in 0..<25 { metrics.record(rtt, seconds: Double(loop * 25 + sample + 1) / 1_000) }
            merged.merge(metrics.snapshot(at: 1_000 + Int64(loop)))
        }
        #expect(merged.series.count == 3)
        #expect(merged.counterTotal(SkirmishMetrics.bytesSent) == 40)
        #expect(merged.gaugeTotal(SkirmishMetrics.botsConnected) == 10)
        #expect(merged.timestampMs == 1_003)
        #expect(merged.startTimeMs == 100)
        let rtt = try #require(merged.histogram(SkirmishMetrics.rtt))
        #expect(rtt.count == 100)
        let p99 = try #require(rtt.quantile(0.99))
        #expect(abs(p99 - 0.099) < 0.0001)
        #expect(merged.counterTotal(SkirmishMetrics.bytesSent, where: ["game": "snap"]) == 0)
    }

    /// Reads handed off the loop and finished elsewhere, in any order, add up to everything recorded: counts, the
    /// exact running sum and the export buckets, with nothing counted twice.
    @Test func handOffsFinishedInAnyOrderAddUpToEverythingRecordedOnce() throws {
        let metrics = MetricsShard(constantLabels: [:])
        let rtt = metrics.histogram(SkirmishMetrics.rtt)
        let age = metrics.histogram(SkirmishMetrics.snapshotAge, visibleAtZero: false)
        var exactSum = 0.0
        func record(_ values: ClosedRange<Int>) {
            for value in values {
                let seconds = Double(value) / 7_000
                metrics.record(rtt, seconds: seconds)
                exactSum += seconds
            }
        }
        record(1...30)
        let first = metrics.handOff(at: 1)
        record(31...70)
        let second = metrics.handOff(at: 2)
        // The second read finishes first: it holds its own part and what was finished before it (nothing).
        let early = try #require(second.snapshot().histogram(SkirmishMetrics.rtt))
        #expect(early.count == 40)
        let late = try #require(first.snapshot().histogram(SkirmishMetrics.rtt))
        #expect(late.count == 70)
        // Finishing a read again adds nothing.
        #expect(try #require(first.snapshot().histogram(SkirmishMetrics.rtt)).count == 70)
        record(71...100)
        let whole = try #require(metrics.snapshot(at: 3).histogram(SkirmishMetrics.rtt))
        #expect(whole.count == 100)
        #expect(whole.sum == exactSum)
        #expect(whole.cumulativeBucketCounts().last == 100)
        #expect(abs(try #require(whole.quantile(0.5)) - 50.0 / 7_000) < 0.0001)
        // A series hidden until it holds a value stays hidden through hand-offs, and shows once it does.
        #expect(metrics.snapshot(at: 4).histogram(SkirmishMetrics.snapshotAge) == nil)
        metrics.record(age, seconds: 0.01)
        #expect(metrics.snapshot(at: 5).histogram(SkirmishMetrics.snapshotAge)?.count == 1)
    }

    /// A read handed off and dropped unfinished loses nothing: its part reaches the totals when it goes.
    @Test func aHandOffDroppedUnfinishedStillAddsItsPart() throws {
        let metrics = MetricsShard(constantLabels: [:])
        let rtt = metrics.histogram(SkirmishMetrics.rtt)
        for value in 1...10 { metrics.record(rtt, seconds: Double(value) / 1_000) }
        do { _ = metrics.handOff(at: 1) }
        for value in 11...15 { metrics.record(rtt, seconds: Double(value) / 1_000) }
        #expect(try #require(metrics.snapshot(at: 2).histogram(SkirmishMetrics.rtt)).count == 15)
    }

    @Test func histogramIgnoresNaNAndClampsOutOfRangeValues() throws {
        let metrics = MetricsShard(constantLabels: [:])
        let id = metrics.histogram(SkirmishMetrics.handshake)
        metrics.record(id, seconds: .nan)
        metrics.record(id, seconds: -1)
        metrics.record(id, seconds: 1e9)
        let value = try #require(metrics.snapshot(at: 0).histogram(SkirmishMetrics.handshake))
        #expect(value.count == 2)
        #expect(value.sum == HistogramScale.seconds.highest)
        #expect(value.cumulativeBucketCounts().first == 1)
    }

    @Test func everyFamilyNameIsUniqueAndFollowsPrometheusConventions() {
        let names = SkirmishMetrics.all.map(\.name)
        #expect(Set(names).count == names.count)
        for family in SkirmishMetrics.all {
            #expect(family.name.hasPrefix("skirmish_"))
            if case .counter = family.kind { #expect(family.name.hasSuffix("_total"), "\(family.name)") }
            if case .histogram = family.kind {
                // A base unit, or bytes per second for the bandwidth of one bot or match (a rate is its unit there).
                let units = ["_seconds", "_pixels", "_bytes_per_second"]
                #expect(units.contains { family.name.hasSuffix($0) }, "\(family.name)")
            }
        }
        #expect(SkirmishMetrics.rtt.labelNames == ["game", "persona"])
        #expect(SkirmishMetrics.serverRejectedPackets.labelNames == ["reason"])
    }

    /// A distribution written to JSON (summary.json) reads back with the same count, sum, buckets and quantiles, and
    /// two read back merge like the originals: what lets a sharded run's summaries be merged exactly.
    @Test func histogramsRoundTripThroughJSONAndStillMerge() throws {
        var a = HistogramValue(scale: .seconds)
        var b = HistogramValue(scale: .seconds)
        for step in 0..<1_000 { a.record(0.0005 + Double(step) * 0.00007) }
        for step in 0..<300 { b.record(0.020 + Double(step % 17) * 0.003) }
        let decodedA = try JSONDecoder().decode(HistogramValue.self, from: JSONEncoder().encode(a))
        let decodedB = try JSONDecoder().decode(HistogramValue.self, from: JSONEncoder().encode(b))
        #expect(decodedA.count == a.count && decodedA.sum == a.sum)
        #expect(decodedA.cumulativeBucketCounts() == a.cumulativeBucketCounts())
        var merged = a
        merged.merge(b)
        var mergedDecoded = decodedA
        mergedDecoded.merge(decodedB)
        for q in [0.0, 0.5, 0.9, 0.99, 1.0] { #expect(mergedDecoded.quantile(q) == merged.quantile(q), "q \(q)") }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(HistogramValue.self, from: Data(#"{"resolution":1e6}"#.utf8))
        }
    }
}
