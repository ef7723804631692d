import Foundation
import SkirmishTelemetry
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// `skirmish compare`'s statistics on runs made by hand: a real change is flagged in the right direction, noise is
/// not, and each test answers as its textbook does.
@Suite(.ownThread) struct ComparisonTests {
    /// A run of `seconds` one-second blocks of persona `p`: RTTs drawn around `rtt`, `errors` a second at random.
    static func samples(
        seconds: Int, rtt: Double, jitter: Double = 0.3, packetsPerSecond: UInt64 = 600, errorsPerSecond: Double = 0,
        desyncAt: Int? = nil, burstAt: Int? = nil, burstSize: UInt64 = 0, predictionsPerSecond: Int = 0,
        mispredictedShare: Double = 0, seed: UInt64
    ) -> RunSamples {
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        let labels: Labels = ["game": "puck", "persona": "p"]
        let rttID = shard.histogram(SkirmishMetrics.rtt, labels)
        let sent = shard.counter(SkirmishMetrics.packetsSent, labels.adding(["type": "Ping", "delivery": "x"]))
        let errors = shard.counter(SkirmishMetrics.errors, labels.adding(["kind": "transport"]))
        let desyncs = shard.counter(SkirmishMetrics.desyncs, labels.adding(["part": "hash"]))
        let predictionError = shard.histogram(SkirmishMetrics.predictionError, labels)
        let mispredictions = shard.counter(SkirmishMetrics.mispredictions, labels)
        let bots = shard.gauge(SkirmishMetrics.botsConnected, labels)
        shard.add(bots, 10)
        var random = SeededRandom(seed: seed)
        var samples = RunSamples()
        var owed = 0.0
        for second in 1...seconds {
            // Each second drifts a little as a whole (samples inside a second move together), plus per-sample noise.
            let drift = 1 + jitter * (Double(random.next() % 1_000) / 1_000 - 0.5)
            for _ in 0..<50 {
                let noise = 1 + jitter * (Double(random.next() % 1_000) / 1_000 - 0.5)
                shard.record(rttID, seconds: rtt * drift * noise)
            }
            shard.add(sent, packetsPerSecond)
            owed += errorsPerSecond
            while owed >= 1 {
                shard.add(errors)
                owed -= 1
            }
            if second == desyncAt { shard.add(desyncs) }
            for _ in 0..<predictionsPerSecond {
                // Each prediction misses (more than 2 px off) with the given chance.
                let missed = Double(random.next() % 10_000) / 10_000 < mispredictedShare
                shard.record(predictionError, value: missed ? 6 : 0.5)
                if missed { shard.add(mispredictions) }
            }
            if second == burstAt { shard.add(errors, burstSize) }
            samples.record(shard.snapshot(at: 0), at: Double(second), personas: ["p"])
        }
        samples.finish()
        return samples
    }

    static func compare(_ base: RunSamples, _ new: RunSamples) -> Comparison {
        Comparison(
            base: .init(run: "base", personas: [("p", "puck")], samples: base),
            new: .init(run: "new", personas: [("p", "puck")], samples: new), options: Comparison.Options())
    }

    static func verdicts(_ comparison: Comparison) -> [String: Comparison.Verdict] {
        Dictionary(uniqueKeysWithValues: comparison.rows.map { ($0.metric, $0.verdict) })
    }

    @Test func twoRunsOfTheSameSystemShowNoChange() {
        // Ten pairs of independent runs of one system: no figure may be called changed.
        for seed in UInt64(1)...10 {
            let comparison = Self.compare(
                Self.samples(seconds: 30, rtt: 0.020, errorsPerSecond: 0.5, seed: seed),
                Self.samples(seconds: 30, rtt: 0.020, errorsPerSecond: 0.5, seed: seed + 100))
            let changed = comparison.rows.filter { $0.verdict == .better || $0.verdict == .worse }
            #expect(changed.isEmpty, "seed \(seed): \(changed.map { "\($0.metric) \($0.verdict)" })")
            #expect(!comparison.anyWorse)
        }
    }

    @Test func slowerRoundTripsAreWorseAndFasterOnesBetter() throws {
        let base = Self.samples(seconds: 30, rtt: 0.020, seed: 1)
        let slower = Self.compare(base, Self.samples(seconds: 30, rtt: 0.030, seed: 2))
        #expect(Self.verdicts(slower)["rtt_p50"] == .worse)
        #expect(Self.verdicts(slower)["rtt_p99"] == .worse)
        let row = try #require(slower.rows.first { $0.metric == "rtt_p50" })
        // The interval brackets the true shift of about +10 ms.
        #expect(try #require(row.low) > 0.005 && #require(row.high) < 0.015)
        #expect(slower.anyWorse)
        let faster = Self.compare(base, Self.samples(seconds: 30, rtt: 0.012, seed: 3))
        #expect(Self.verdicts(faster)["rtt_p50"] == .better)
    }

    @Test func aSignificantChangeTooSmallToMatterIsNoChange() {
        // 3 % slower with very little noise: significant, but under the 10 % tolerance.
        let comparison = Self.compare(
            Self.samples(seconds: 60, rtt: 0.100, jitter: 0.01, seed: 1),
            Self.samples(seconds: 60, rtt: 0.103, jitter: 0.01, seed: 2))
        let row = comparison.rows.first { $0.metric == "rtt_p50" }
        #expect(row?.verdict == .noChange)
        #expect((row?.low ?? 0) > 0, "the shift itself is significant")
    }

    @Test func lowerThroughputAndMoreErrorsAreWorse() {
        let comparison = Self.compare(
            Self.samples(seconds: 30, rtt: 0.02, packetsPerSecond: 600, errorsPerSecond: 0.2, seed: 1),
            Self.samples(seconds: 30, rtt: 0.02, packetsPerSecond: 400, errorsPerSecond: 3, seed: 2))
        let verdicts = Self.verdicts(comparison)
        #expect(verdicts["packets_per_second"] == .worse)
        #expect(verdicts["errors_per_bot_hour"] == .worse)
        #expect(verdicts["rtt_p50"] == .noChange)
    }

    @Test func aRerunWhoseErrorsCameInOneBurstIsNoChange() {
        // Same error rate overall; the rerun's errors all fell in one second (a reconnect storm), the baseline's
        // spread out. Independent-event tests call this a regression; resampling whole seconds does not.
        var base = Self.samples(seconds: 30, rtt: 0.02, errorsPerSecond: 1, seed: 1)
        var burst = Self.samples(seconds: 30, rtt: 0.02, seed: 2)
        #expect(base.total["p"]?.errors == 30)
        burst = Self.samples(seconds: 30, rtt: 0.02, burstAt: 12, burstSize: 45, seed: 2)
        let verdicts = Self.verdicts(Self.compare(base, burst))
        #expect(verdicts["errors_per_bot_hour"] == .noChange)
        base = Self.samples(seconds: 30, rtt: 0.02, errorsPerSecond: 1, seed: 3)
        // Ten times the errors, spread out, is worse.
        let worse = Self.verdicts(
            Self.compare(base, Self.samples(seconds: 30, rtt: 0.02, errorsPerSecond: 10, seed: 4)))
        #expect(worse["errors_per_bot_hour"] == .worse)
    }

    @Test func aRunLimitedByItsGeneratorIsNotComparedOnLatency() {
        let comparison = Comparison(
            base: .init(
                run: "base", personas: [("p", "puck")], samples: Self.samples(seconds: 20, rtt: 0.02, seed: 1)),
            new: .init(
                run: "new", personas: [("p", "puck")], samples: Self.samples(seconds: 20, rtt: 0.2, seed: 2),
                generatorWarning: "tick lateness p99 was 214.4 ms (over 5 ms): the generator could not keep up"),
            options: Comparison.Options())
        let verdicts = Self.verdicts(comparison)
        #expect(verdicts["rtt_p99"] == .notCompared && verdicts["packets_per_second"] == .notCompared)
        #expect(verdicts["misprediction_rate"] == .notCompared)
        #expect(verdicts["matches_completed_per_bot_hour"] == .notCompared)
        #expect(verdicts["errors_per_bot_hour"] == .noChange)
        #expect(comparison.notes.contains { $0.contains("limited by its own generator") })
    }

    @Test func mispredictionsAreJudgedPerPredictionNotPerBotHour() {
        // The new server answers faster, so its bots judge four times the predictions an hour, with the same share
        // missed: four times the mispredictions per bot-hour, which is not worse.
        let base = Self.samples(seconds: 30, rtt: 0.04, predictionsPerSecond: 50, mispredictedShare: 0.1, seed: 1)
        let faster = Self.samples(seconds: 30, rtt: 0.02, predictionsPerSecond: 200, mispredictedShare: 0.1, seed: 2)
        let comparison = Self.compare(base, faster)
        let rows = Dictionary(uniqueKeysWithValues: comparison.rows.map { ($0.metric, $0) })
        #expect(rows["rtt_p99"]?.verdict == .better)
        let rate = rows["misprediction_rate"]
        #expect(rate?.verdict == .noChange, "\(String(describing: rate))")
        #expect(abs((rate?.base ?? 0) - 0.1) < 0.02 && abs((rate?.new ?? 0) - 0.1) < 0.02)
        #expect(!comparison.anyWorse, "a pure improvement fails nothing: \(comparison.table(all: true))")

        // Missing three predictions in ten instead of one is worse, whatever the count per hour.
        let sloppy = Self.samples(seconds: 30, rtt: 0.04, predictionsPerSecond: 50, mispredictedShare: 0.3, seed: 3)
        #expect(Self.verdicts(Self.compare(base, sloppy))["misprediction_rate"] == .worse)
    }

    @Test func everyFigureKnowsItsDirection() {
        let comparison = Self.compare(
            Self.samples(seconds: 10, rtt: 0.02, seed: 1), Self.samples(seconds: 10, rtt: 0.02, seed: 2))
        let better = Dictionary(uniqueKeysWithValues: comparison.rows.map { ($0.metric, $0.better) })
        #expect(better["rtt_p99"] == .lower && better["misprediction_rate"] == .lower)
        #expect(better["errors_per_bot_hour"] == .lower && better["desyncs_per_bot_hour"] == .lower)
        #expect(better["packets_per_second"] == .higher && better["matches_completed_per_bot_hour"] == .higher)
        #expect(comparison.table(all: true).contains("better"))
    }

    @Test func runsOfDifferentScriptsAreComparedWithANote() {
        let samples = Self.samples(seconds: 10, rtt: 0.02, seed: 1)
        func side(_ run: String, _ script: (String, String?)) -> Comparison.Side {
            .init(run: run, personas: [("p", "puck")], samples: samples, script: script)
        }
        let same = Comparison(
            base: side("a", ("ladder", "00aa")), new: side("b", ("ladder", "00aa")), options: Comparison.Options())
        #expect(same.notes.isEmpty)
        // A name built from `${NAME}` differs between runs of one script; the digest decides.
        let renamed = Comparison(
            base: side("a", ("nightly-eu", "00aa")), new: side("b", ("nightly-us", "00aa")),
            options: Comparison.Options())
        #expect(renamed.notes.isEmpty)
        let pairs: [((String, String?), (String, String?))] = [
            (("ladder", "00aa"), ("ladder", "00bb")), (("ladder", nil), ("soak", nil)),
        ]
        for (base, new) in pairs {
            let comparison = Comparison(base: side("a", base), new: side("b", new), options: Comparison.Options())
            #expect(comparison.notes.contains { $0.contains("the runs ran different scripts") }, "\(comparison.notes)")
            #expect(comparison.table().contains("note: the runs ran different scripts"))
        }
        #expect(Script.digest(of: "name: a\n") != Script.digest(of: "name: b\n"))
        #expect(Script.digest(of: "").count == 16)
    }

    @Test func oneDesyncWhereTheBaselineHadNoneIsWorse() {
        let comparison = Self.compare(
            Self.samples(seconds: 20, rtt: 0.02, seed: 1), Self.samples(seconds: 20, rtt: 0.02, desyncAt: 7, seed: 2))
        #expect(Self.verdicts(comparison)["desyncs_per_bot_hour"] == .worse)
    }

    @Test func aPersonaOnlyOneRunHadIsNotCompared() {
        let comparison = Comparison(
            base: .init(
                run: "base", personas: [("p", "puck"), ("q", "snap")],
                samples: Self.samples(
                    seconds: 5, rtt: 0.02, seed: 1)),
            new: .init(run: "new", personas: [("p", "puck")], samples: Self.samples(seconds: 5, rtt: 0.02, seed: 2)),
            options: Comparison.Options())
        #expect(comparison.rows.filter { $0.persona == "q" }.allSatisfy { $0.verdict == .notCompared })
        #expect(comparison.rows.contains { $0.persona == "p" && $0.verdict == .noChange })
    }

    @Test func samplesKeepTheirBlocksBoundedAndTheirTotalsExact() {
        let long = Self.samples(seconds: 500, rtt: 0.02, seed: 4)
        // 500 one-second blocks folded into at most 64: halved each time they fill, never fewer than half.
        #expect(long.blocks.count <= long.capacity && long.blocks.count >= long.capacity / 2 - 1)
        #expect(long.blockSeconds >= 8)
        #expect(long.blocks.reduce(0) { $0 + $1.seconds } == 500)
        #expect(long.total["p"]?.rtt?.total == 500 * 50)
        #expect(long.total["p"]?.packets == 500 * 600)
    }
}
