import Foundation
import SkirmishTelemetry
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// Thresholds judged while a run lasts: windows, the run so far, abort_on_fail — with time as a parameter and
/// snapshots made by hand, so each verdict is exact.
@Suite struct ThresholdJudgeTests {
    /// A persona's metrics, as one bot loop's shard counts them.
    final class Metrics {
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        let rtt: HistogramID
        let errors: CounterID
        let rogueErrors: CounterID

        init() {
            rtt = shard.histogram(SkirmishMetrics.rtt, ["game": "puck", "persona": "p"])
            errors = shard.counter(SkirmishMetrics.errors, ["game": "puck", "persona": "p", "kind": "transport"])
            rogueErrors = shard.counter(
                SkirmishMetrics.errors, ["game": "puck", "persona": "rogue", "kind": "transport"])
        }

        func snapshot() -> MetricsSnapshot { shard.snapshot(at: 0) }
    }

    static func script(_ thresholds: String) throws -> Script {
        try ScriptLoader().parse(
            "name: t\npersonas: [{name: p, game: puck}]\nthresholds:\n\(thresholds)", file: "t.yaml")
    }

    @Test func aWindowedThresholdParsesItsOptions() throws {
        let script = try Self.script(
            """
              rtt_p99:
                - "< 50ms"
                - {limit: "< 120ms", window: 5m, abort_on_fail: true, delay_abort_eval: 30s}
            """)
        #expect(script.thresholds.count == 2)
        let windowed = script.thresholds[1]
        #expect(windowed.window == .seconds(300))
        #expect(windowed.abortOnFail)
        #expect(windowed.delayAbortEval == .seconds(30))
        #expect(windowed.limit == 0.12)
        #expect(windowed.description == "rtt_p99 < 120ms over every 5m window")
        #expect(script.thresholds[0].window == nil && !script.thresholds[0].abortOnFail)
    }

    @Test func aSlowStretchFailsItsWindowThoughTheWholeRunPasses() throws {
        let script = try Self.script("  rtt_p99: {limit: \"< 100ms\", window: 3s}\n  rtt_p50: \"< 100ms\"")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        // 20 s of 10 ms round trips, except 200 ms ones during seconds 10–11.
        for second in 1...20 {
            for _ in 0..<100 { metrics.shard.record(metrics.rtt, seconds: (11...12).contains(second) ? 0.2 : 0.01) }
            #expect(judge.observe(metrics.snapshot(), at: Double(second)) == nil, "no abort_on_fail: never stops")
        }
        judge.finish(metrics.snapshot(), at: 20)
        let record = try #require(judge.windowRecords[0])
        // Windows end at 3 s … 20 s; those containing second 11 or 12 fail: ends 11…14.
        #expect(record.judged == 18)
        #expect(record.failed == 4)
        let first = try #require(record.firstFailure)
        #expect(first.windowStartSeconds == 8 && first.windowEndSeconds == 11)
        #expect(abs(first.value - 0.2) < 0.001)
        #expect(judge.windowRecords[1] == nil)

        // The summary's verdict: the windowed threshold fails, the whole-run median still passes.
        let whole = SnapshotReader(snapshot: metrics.snapshot(), legit: ["p"])
        let p99 = ThresholdMetric.percentile(.rtt, quantile: 0.99)
        #expect(try #require(p99.value(of: p99.reading(whole))) > 0.1)
    }

    @Test func abortOnFailStopsAtTheFirstFailingWindowAfterTheDelay() throws {
        let script = try Self.script(
            "  errors: {limit: \"< 5\", window: 2s, abort_on_fail: true, delay_abort_eval: 4s}")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        var stopped: ThresholdJudge.Breach?
        for second in 1...10 where stopped == nil {
            // 10 errors a second: every window fails, but none may stop the run before 4 s.
            metrics.shard.add(metrics.errors, 10)
            stopped = judge.observe(metrics.snapshot(), at: Double(second))
        }
        let breach = try #require(stopped)
        #expect(breach.atSeconds == 4)
        #expect(breach.windowStartSeconds == 2 && breach.windowEndSeconds == 4)
        #expect(breach.value == 20)
    }

    @Test func aRoguePersonasTrafficNeverFailsAThreshold() throws {
        let script = try Self.script("  errors: {limit: \"== 0\", window: 2s, abort_on_fail: true}")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        for second in 1...5 {
            metrics.shard.add(metrics.rogueErrors, 100)
            #expect(judge.observe(metrics.snapshot(), at: Double(second)) == nil)
        }
        #expect(judge.windowRecords[0]?.failed == 0)
    }

    @Test func aRunShorterThanItsWindowIsJudgedOnceOverTheWholeRun() throws {
        let script = try Self.script("  errors: {limit: \"< 3\", window: 1m}")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        for second in 1...5 {
            metrics.shard.add(metrics.errors)
            _ = judge.observe(metrics.snapshot(), at: Double(second))
        }
        #expect(judge.windowRecords[0]?.judged == 0)
        judge.finish(metrics.snapshot(), at: 5.5)
        let record = try #require(judge.windowRecords[0])
        #expect(record.judged == 1 && record.failed == 1)
        #expect(record.firstFailure?.value == 5)
        #expect(record.firstFailure?.windowStartSeconds == 0)
    }

    @Test func aThresholdOverTheRunSoFarAbortsWhenItFails() throws {
        let script = try Self.script("  errors: {limit: \"< 3\", abort_on_fail: true}")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        var stops: [Double] = []
        for second in 1...6 {
            metrics.shard.add(metrics.errors)
            if let breach = judge.observe(metrics.snapshot(), at: Double(second)) { stops.append(breach.atSeconds) }
        }
        // Fails from the third error on; the run loop stops at the first.
        #expect(stops.first == 3)
    }
}
