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
        let bots: GaugeID
        let pingsSent: CounterID
        let pongs: CounterID

        init() {
            bots = shard.gauge(SkirmishMetrics.botsConnected, ["game": "puck", "persona": "p"])
            pingsSent = shard.counter(
                SkirmishMetrics.pings, ["game": "puck", "persona": "p", "direction": "sent"])
            pongs = shard.counter(SkirmishMetrics.pings, ["game": "puck", "persona": "p", "direction": "answered"])
            rtt = shard.histogram(SkirmishMetrics.rtt, ["game": "puck", "persona": "p"])
            errors = shard.counter(SkirmishMetrics.errors, ["game": "puck", "persona": "p", "kind": "transport"])
            rogueErrors = shard.counter(
                SkirmishMetrics.errors, ["game": "puck", "persona": "rogue", "kind": "transport"])
        }

        func snapshot() -> MetricsSnapshot { shard.snapshot(at: 0) }
    }

    static func script(_ thresholds: String) throws -> Script {
        try Catalogue.builtIn.scriptLoader.parse(
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

    @Test func aFilteredThresholdJudgesOnlyItsPersonaOrGame() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(
            """
            name: t
            personas: [{name: fast, game: puck}, {name: slow, game: puck}, {name: cards, game: snap}]
            thresholds:
              rtt_p99: "< 100ms"
              rtt_p99{persona:fast}: [{limit: "< 100ms", window: 2s, abort_on_fail: true}, "< 100ms"]
              "rtt_p99{ persona: slow , game: puck }": "< 100ms"
              errors{game:snap}: "== 0"
              errors{protocol:snap}: "< 10"
            """, file: "t.yaml")
        #expect(
            script.thresholds.map(\.filter) == [
                [:], ["persona": "fast"], ["persona": "fast"], ["persona": "slow", "game": "puck"], ["game": "snap"],
                ["protocol": "snap"],
            ])
        #expect(script.thresholds[3].description == "rtt_p99{game:puck,persona:slow} < 100ms")
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        let fast = shard.histogram(SkirmishMetrics.rtt, ["game": "puck", "persona": "fast"])
        let slow = shard.histogram(SkirmishMetrics.rtt, ["game": "puck", "persona": "slow"])
        let cardErrors = shard.counter(SkirmishMetrics.errors, ["game": "snap", "persona": "cards", "kind": "x"])
        let puckErrors = shard.counter(SkirmishMetrics.errors, ["game": "puck", "persona": "slow", "kind": "x"])
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["fast", "slow", "cards"])
        for second in 1...6 {
            for _ in 0..<100 {
                shard.record(fast, seconds: 0.01)
                shard.record(slow, seconds: 0.3)
            }
            shard.add(puckErrors, 2)
            // The slow persona's round trips never stop the run: only the fast one's window may.
            #expect(judge.observe(shard.snapshot(at: 0), at: Double(second)) == nil)
        }
        judge.finish(shard.snapshot(at: 0), at: 6)
        #expect(judge.windowRecords[1]?.judged == 5 && judge.windowRecords[1]?.failed == 0)
        let reader = SnapshotReader(snapshot: shard.snapshot(at: 0), legit: ["fast", "slow", "cards"])
        func value(_ index: Int) -> Double? {
            let threshold = script.thresholds[index]
            return threshold.metric.value(of: threshold.metric.reading(reader.scoped(to: threshold)))
        }
        #expect(try #require(value(0)) > 0.1, "all personas together: the slow one's p99")
        #expect(try #require(value(2)) < 0.02, "the fast persona alone")
        #expect(try #require(value(3)) > 0.1)
        #expect(value(4) == 0, "the snap game had no error; the puck game's 12 are not its")
        #expect(value(5) == 12, "the script's one protocol: every persona's errors")
        shard.add(cardErrors)
        let after = SnapshotReader(snapshot: shard.snapshot(at: 0), legit: ["fast", "slow", "cards"])
        let snapErrors = script.thresholds[4]
        #expect(snapErrors.metric.value(of: snapErrors.metric.reading(after.scoped(to: snapErrors))) == 1)
    }

    @Test(
        arguments: [
            ("rtt_p99{persona:chasr}: \"< 1s\"", "no persona `chasr` in this script", "did you mean `chaser`?"),
            ("rtt_p99{team:red}: \"< 1s\"", "filters on `team`, which no series carries", "persona, game, protocol"),
            ("rtt_p99{persona:chaser,persona:chaser}: \"< 1s\"", "filters on `persona` twice", "keep one"),
            ("rtt_p99{persona}: \"< 1s\"", "`persona` is not label:value", "{persona:chaser}"),
            ("rtt_p99{game:suns}: \"< 1s\"", "no game `suns` in this script", "its games: puck"),
            ("rtt_p99{protocol:enet}: \"< 1s\"", "no protocol `enet` in this script", "its protocols: snap"),
            ("errors{persona:bad}: \"== 0\"", "persona `bad` is rogue", nil),
            ("exporter_failures{persona:chaser}: \"== 0\"", "belong to no persona or game", nil),
        ] as [(String, String, String?)])
    func aFilterNamingNothingInTheScriptIsRefused(line: String, message: String, hint: String?) {
        expectRefusal(
            """
            name: t
            personas: [{name: chaser, game: puck}, {name: bad, game: puck, behavior: rogue}]
            thresholds:
              \(line)
            """, line: 4, message: message, hint: hint)
    }

    @Test func aSlowStretchFailsItsWindowThoughTheWholeRunPasses() throws {
        let script = try Self.script("  rtt_p99: [\"< 100ms\", {limit: \"< 100ms\", window: 3s}]")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        // 20 s of 1,000 round trips a second at 10 ms, plus 100 at 200 ms during second 11: 0.5 % of the run (its
        // p99 stays 10 ms) but 3 % of any 3 s window holding that second.
        for second in 1...20 {
            for _ in 0..<1_000 { metrics.shard.record(metrics.rtt, seconds: 0.01) }
            if second == 11 { for _ in 0..<100 { metrics.shard.record(metrics.rtt, seconds: 0.2) } }
            #expect(judge.observe(metrics.snapshot(), at: Double(second)) == nil, "no abort_on_fail: never stops")
        }
        judge.finish(metrics.snapshot(), at: 20)
        #expect(judge.windowRecords[0] == nil, "the first is judged over the whole run")
        let record = try #require(judge.windowRecords[1])
        // Windows end at 3 s … 20 s; those holding second 11 fail: ends 11, 12 and 13.
        #expect(record.judged == 18)
        #expect(record.failed == 3)
        let first = try #require(record.firstFailure)
        #expect(first.windowStartSeconds == 8 && first.windowEndSeconds == 11)
        #expect(abs(try #require(first.value) - 0.2) < 0.001)

        // Over the whole run the same limit holds.
        let whole = SnapshotReader(snapshot: metrics.snapshot(), legit: ["p"])
        let p99 = ThresholdMetric.percentile(.rtt, quantile: 0.99)
        let value = try #require(p99.value(of: p99.reading(whole)))
        #expect(script.thresholds[0].holds(value), "whole-run p99 \(value)")
    }

    @Test func aStallWithBotsConnectedFailsItsWindowButAnEmptyRampDoesNot() throws {
        let script = try Self.script("  rtt_p99: {limit: \"< 100ms\", window: 2s, abort_on_fail: true}")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        // Seconds 1–3: no bot yet, no sample: not judged. Then bots and round trips; from second 8 a stall: bots stay
        // connected, no Pong comes back.
        var stopped: ThresholdJudge.Breach?
        for second in 1...12 where stopped == nil {
            if second == 4 { metrics.shard.add(metrics.bots, 4) }
            if (4...7).contains(second) { for _ in 0..<10 { metrics.shard.record(metrics.rtt, seconds: 0.01) } }
            stopped = judge.observe(metrics.snapshot(), at: Double(second))
        }
        let breach = try #require(stopped)
        #expect(breach.windowStartSeconds == 7 && breach.windowEndSeconds == 9)
        #expect(breach.value == nil)
        #expect(judge.windowRecords[0]?.failed == 1)
    }

    /// A figure no persona measures has no series (a protocol without round trips or state checks plans them with
    /// `visibleAtZero: false`): its thresholds are never judged while the run lasts — no stall, no abort — until a
    /// series appears, and then they are judged as usual.
    @Test func aThresholdOnAFigureNobodyMeasuresNeitherAbortsNorFailsAWindow() throws {
        let script = try Self.script(
            """
              rtt_p99: {limit: "< 100ms", window: 2s, abort_on_fail: true}
              desyncs: {limit: "== 0", window: 2s, abort_on_fail: true}
              reply_rate: {limit: ">= 95%", abort_on_fail: true}
            """)
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        let labels: Labels = ["game": "puck", "persona": "p"]
        shard.add(shard.gauge(SkirmishMetrics.botsConnected, labels), 4)
        _ = shard.histogram(SkirmishMetrics.rtt, labels, visibleAtZero: false)
        _ = shard.counter(SkirmishMetrics.desyncs, labels.adding(["part": "hash"]), visibleAtZero: false)
        let sent = shard.counter(SkirmishMetrics.pings, labels.adding(["direction": "sent"]), visibleAtZero: false)
        _ = shard.counter(SkirmishMetrics.pings, labels.adding(["direction": "answered"]), visibleAtZero: false)
        // Bots connected for ten seconds and not one round trip: with the series, a stall that aborts at 2 s.
        for second in 1...10 {
            #expect(judge.observe(shard.snapshot(at: 0), at: Double(second)) == nil, "second \(second)")
        }
        judge.finish(shard.snapshot(at: 0), at: 10)
        #expect(judge.windowRecords[0] == ThresholdJudge.WindowRecord())
        #expect(judge.windowRecords[1] == ThresholdJudge.WindowRecord())

        // Once pings are counted the figure is measured, and unanswered ones fail the run at once.
        var measuring = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        shard.add(sent, 100)
        let breach = measuring.observe(shard.snapshot(at: 0), at: 1)
        #expect(breach?.threshold == "reply_rate >= 95%" && breach?.value == 0)
    }

    @Test func aRateOverTooFewEventsIsNotJudgedYet() throws {
        let script = try Self.script("  reply_rate: {limit: \">= 95%\", abort_on_fail: true}")
        var judge = ThresholdJudge(thresholds: script.thresholds, legit: ["p"])
        let metrics = Metrics()
        // Ten pings out, nine answered (one still in flight): 90 %, but over too few to stop a run.
        metrics.shard.add(metrics.pingsSent, 10)
        metrics.shard.add(metrics.pongs, 9)
        #expect(judge.observe(metrics.snapshot(), at: 1) == nil)
        // A hundred out and eighty back is a real failure.
        metrics.shard.add(metrics.pingsSent, 90)
        metrics.shard.add(metrics.pongs, 71)
        #expect(judge.observe(metrics.snapshot(), at: 2)?.value == 0.8)
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
