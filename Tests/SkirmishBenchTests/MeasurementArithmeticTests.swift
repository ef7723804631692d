import NIOConcurrencyHelpers
import Testing

@testable import SkirmishBench

/// The figures benchmarks derive, against values worked out by hand.
@Suite struct MeasurementArithmeticTests {
    @Test func perIterationFigures() {
        let measurement = Measurement(iterations: 4, nanoseconds: 2_000, cpuNanoseconds: 1_000, allocations: 6)
        #expect(measurement.nanosecondsPerIteration == 500)
        #expect(measurement.cpuNanosecondsPerIteration == 250)
        #expect(measurement.allocationsPerIteration == 1.5)
        #expect(measurement.perSecond == 2_000_000)
    }

    @Test func theAllocationCounterIsCheckedAndUsed() throws {
        let count = NIOLockedValueBox<UInt64>(0)
        let counting = BenchEnvironment(threadAllocations: {
            count.withLockedValue {
                $0 += 100
                return $0
            }
        })
        try Measurement.checkAllocationCounter(counting)
        // Read once before and once after the timed loop, not inside it.
        #expect(Measurement.run(iterations: 10, environment: counting) { _ in }.allocations == 100)
        let silent = BenchEnvironment(threadAllocations: { 0 })
        #expect(
            throws: BenchError(
                "the heap-allocation counter is not active in this binary; allocation figures would lie")
        ) {
            try Measurement.checkAllocationCounter(silent)
        }
        #expect(throws: BenchError.self) { try CodecBenchmark.run(.init(iterations: 10), environment: silent) }
    }

    @Test func percentilesAreNearestRank() {
        let percentiles = Percentiles([5, 1, 4, 2, 3])
        #expect(percentiles.at(0.5) == 3)
        #expect(percentiles.at(0.99) == 5)
        #expect(percentiles.at(0) == 1)
        #expect(percentiles.max == 5)
        #expect(Percentiles([]).at(0.5).isNaN)
    }

    @Test func sendLatenessPercentilesFromTenMicrosecondBuckets() {
        var report = LoadGenerator.Report()
        #expect(report.latenessMilliseconds(0.99) == 0)
        report.sendLateness[0] = 50
        report.sendLateness[100] = 49
        report.sendLateness[500] = 1
        #expect(report.latenessMilliseconds(0.5) == 0)
        #expect(report.latenessMilliseconds(0.99) == 1)
        #expect(report.latenessMilliseconds(1) == 5)
    }

    @Test func snapshotAgeIsArrivalMinusTheDueTimeOfTheTickThatMadeIt() {
        // Client 0's match started at server tick 5: its snapshot of tick T was made at server tick T + 5, due at
        // (T + 5) / 60 s. Client 1's started at tick 3.
        let samples = [
            LoadGenerator.Sample(client: 0, tick: 10, arrival: 252_000_000, inWindow: true), // due 250 ms: 2 ms
            LoadGenerator.Sample(client: 0, tick: 12, arrival: 288_333_333, inWindow: true), // due 283.33 ms: 5 ms
            LoadGenerator.Sample(client: 0, tick: 8, arrival: 217_666_666, inWindow: false), // warm-up: not counted
            LoadGenerator.Sample(client: 1, tick: 3, arrival: 100_000_000, inWindow: true), // due 100 ms: 0 ms
        ]
        #expect(ServerBenchmark.snapshotAges(samples, anchor: 0) == [2, 5, 0])
        // The same arrivals against a schedule anchored 1 s later: the same ages.
        let shifted = samples.map {
            LoadGenerator.Sample(
                client: $0.client, tick: $0.tick, arrival: $0.arrival + 1_000_000_000, inWindow: $0.inWindow)
        }
        #expect(ServerBenchmark.snapshotAges(shifted, anchor: 1_000_000_000) == [2, 5, 0])
    }

    @Test(
        arguments: [
            (nil, nil, 6_000, nil),
            (125, nil, 6_000, 250),
            (4_000, nil, 6_000, 6_000),
            (6_000, nil, 6_000, nil),
            (nil, 100, 6_000, 50),
            (nil, 10, 6_000, nil),
            (1_000, 2_000, 6_000, 1_500),
            (1_000, 1_040, 6_000, nil),
            (1_000, 1_060, 6_000, 1_030),
        ] as [(Int?, Int?, Int, Int?)])
    func serverSearchDoublesThenBisects(pass: Int?, fail: Int?, limit: Int, next: Int?) {
        #expect(ServerBenchmark.nextStep(pass: pass, fail: fail, max: limit) == next)
    }

    @Test func aStepTheGeneratorCouldNotKeepUpWithBoundsTheSearch() {
        var search = ServerBenchmark.Search()
        search.record(step(125, passed: true))
        #expect(search.next(max: 6_000) == 250)
        // At 250 the generator fell behind: the server is not to blame, but the search stays below 250.
        search.record(step(250, passed: false, overloaded: true))
        #expect(search.generatorBound == 250)
        #expect(search.worst == nil)
        #expect(search.next(max: 6_000) == 187)
        search.record(step(187, passed: false))
        #expect(search.worst?.matches == 187)
        #expect(search.next(max: 6_000) == 156)
        search.record(step(156, passed: true))
        #expect(search.best?.matches == 156)
        // A smaller pass does not replace the best.
        search.record(step(130, passed: true))
        #expect(search.best?.matches == 156)
    }

    @Test func aStepPassesOnlyWithinEveryBudget() {
        func passes(
            welcomed: Int = 4, ageP99: Double = 16.6, delivered: Double = 0.99, inputs: Double = 0.99,
            reanchored: UInt64 = 0, anchorMoved: Bool = false
        ) -> Bool {
            ServerBenchmark.StepResult.passes(
                clients: 4, welcomed: welcomed, ageP99: ageP99, delivered: delivered, inputsDelivered: inputs,
                reanchored: reanchored, anchorMoved: anchorMoved)
        }
        #expect(passes())
        #expect(!passes(welcomed: 3))
        #expect(!passes(ageP99: 16.7))
        #expect(!passes(delivered: 0.989))
        #expect(!passes(inputs: 0.98))
        #expect(!passes(reanchored: 1))
        #expect(!passes(anchorMoved: true))
    }

    @Test func serverCoreProfileMatchesPerCore() {
        let profile = ServerCoreProfile.Result(
            inputNanoseconds: 1_000, inputAllocations: 0, tickNanosecondsPerMatch: 8_000, tickAllocationsPerMatch: 0,
            packetsOutPerTick: 500, welcomed: 1_000, resends: 0)
        // Per match per second: 2 clients × 30 inputs × 1 µs + 60 ticks × 8 µs = 540 µs, so 1e6 / 540 matches.
        #expect(abs(profile.matchesPerCore(inputRate: 30) - 1_851.85) < 0.01)
    }

    @Test func hotPathAllocationsSetTheMetricReadsApart() {
        var probe = HotPathProbe.Result(
            bots: 500, seconds: 4.0, botTicks: 1_000, snapshots: 900, allocations: 5_000, matches: 0,
            perMetricsRead: 100)
        #expect(probe.perBotTick == 5)
        // 4 controller reads plus the probe's own: 500 allocations set apart.
        #expect(probe.perBotTickExcludingReads == 4.5)
        probe.perMetricsRead = 10_000
        #expect(probe.perBotTickExcludingReads == 0)
        probe.botTicks = 0
        #expect(probe.perBotTick == 0)
    }

    @Test(
        arguments: [
            (1_000, nil, 1_500),
            (8_000, nil, nil),
            (7_000, nil, 8_000),
            (1_500, 2_250, 2_000),
            (1_500, 1_750, nil),
            (nil, 1_000, 500),
        ] as [(Int?, Int?, Int?)])
    func swarmSearchGrowsByHalvesThenBisects(best: Int?, failed: Int?, next: Int?) {
        #expect(SwarmBenchmark.nextCount(best: best, failed: failed, upTo: 8_000, step: 250) == next)
    }

    /// A server whose socket overflowed while the swarm kept its schedule set the limit, however busy the swarm was.
    @Test func aServerDroppingWhileTheSwarmKeptTimeSetTheLimit() {
        #expect(
            Trial.saturation(swarmCPU: 0.98, serverCPU: 0.96, serverSocketDrops: 91_219, swarmKeptSchedule: true)
                == "the server (96 % of its core; its socket dropped 91219 datagrams while the swarm kept its "
                + "schedule)")
        // Late sends are the swarm's own failure, whatever the server dropped.
        #expect(
            Trial.saturation(swarmCPU: 0.98, serverCPU: 0.96, serverSocketDrops: 91_219, swarmKeptSchedule: false)
                == "the swarm (98 % of its core)")
        // A server with room to spare did not set it.
        #expect(
            Trial.saturation(swarmCPU: 0.98, serverCPU: 0.6, serverSocketDrops: 10, swarmKeptSchedule: true)
                == "the swarm (98 % of its core)")
        // Without a summary the swarm's schedule is unknown: busy CPU decides, as before.
        #expect(
            trial(swarmCPU: 0.95, serverCPU: 0.95, serverSocketDrops: 5).saturated == "the swarm (95 % of its core)")
    }

    @Test func theProcessAboveNinetyPercentSetTheLimit() {
        #expect(trial(swarmCPU: 0.95, serverCPU: 0.95).saturated == "the swarm (95 % of its core)")
        #expect(trial(swarmCPU: 0.5, serverCPU: 0.92).saturated == "the server (92 % of its core)")
        #expect(trial(swarmCPU: 0.5, serverCPU: 0.5).saturated == nil)
        let lines = SwarmBenchmark.sustainedLines(
            best: nil, failed: trial(swarmCPU: 0.5, serverCPU: 0.5), baseKiB: 0, upTo: 8_000)
        #expect(
            lines[0]
                == "  limit set by neither process's CPU (swarm 50 %, server 50 %): other work on the machine, "
                + "or the kernel at 2000 bots")
        #expect(lines[1].hasPrefix("sustained: no bot count passed; the smallest tried failed by "))
        let server = SwarmBenchmark.sustainedLines(
            best: nil, failed: trial(swarmCPU: 0.3, serverCPU: 0.97), baseKiB: 0, upTo: 8_000)
        #expect(server[0] == "  limit set by the server (97 % of its core) at 2000 bots")
    }

    @Test func trialFiguresAndFailures() {
        var trial = trial(swarmCPU: 0.6, serverCPU: 0.3)
        trial.bots = 1_000
        trial.peakKiB = 11_240
        #expect(trial.microsecondsPerBotTick == 20)
        trial.swarmKernelCPU = 0.45
        #expect(trial.kernelMicrosecondsPerBotTick == 15)
        let best = SwarmBenchmark.sustainedLines(best: trial, failed: nil, baseKiB: 1_000, upTo: 8_000)
        #expect(best[0].contains("20.00 µs of swarm CPU per bot-tick (15.00 µs of it in the kernel)"))
        #expect(abs(trial.botsPerCore - 1_666.67) < 0.01)
        #expect(trial.kibPerBot(baseKiB: 1_000) == 10.24)
        #expect(!trial.passed)
        #expect(trial.limit.contains("no summary"))
        trial.exitStatus = 3
        trial.finishedInTime = false
        #expect(trial.limit.contains("exit status 3"))
        #expect(trial.limit.contains("stopped by a signal"))
    }

    @Test func pushingIsJudgedAgainstTheRunToRunSpread() {
        let within = ExportBenchmark.PushingVerdict(without: [0.002, 0.003], with: [0.0031, 0.0034])
        #expect(abs(within.withoutP99 - 0.0025) < 1e-12)
        #expect(abs(within.withP99 - 0.00325) < 1e-12)
        #expect(abs(within.spread - 0.001) < 1e-12)
        #expect(within.unchanged)
        let beyond = ExportBenchmark.PushingVerdict(without: [0.002, 0.002], with: [0.004, 0.004])
        #expect(beyond.spread == 0)
        #expect(!beyond.unchanged)
        // Without spread, half a millisecond is allowed: below what a bot's 1 ms scheduler could notice.
        #expect(ExportBenchmark.PushingVerdict(without: [0.002], with: [0.0024]).unchanged)
        #expect(!ExportBenchmark.PushingVerdict(without: [0.002], with: [0.0026]).unchanged)
    }

    private func step(_ matches: Int, passed: Bool, overloaded: Bool = false) -> ServerBenchmark.StepResult {
        ServerBenchmark.StepResult(
            matches: matches, welcomed: 2 * matches, packetsIn: 0, packetsOut: 0, serverCPU: 0, ageP50: 0, ageP99: 0,
            ageMax: 0, delivered: 1, inputsDelivered: 1, reanchored: 0, generatorCPU: 0, generatorLatenessP99: 0,
            generatorAllocationsPerPacket: 0, generatorOverloaded: overloaded, passed: passed)
    }

    private func trial(swarmCPU: Double, serverCPU: Double, serverSocketDrops: UInt64 = 0) -> Trial {
        Trial(
            kind: .sustained, bots: 2_000, summary: nil, finishedInTime: true, serverSent: 0, rateLimited: 0,
            serverLateTicks: 0, serverSessionsPeak: 0, kernelDrops: serverSocketDrops,
            serverSocketDrops: serverSocketDrops, swarmCPU: swarmCPU, serverCPU: serverCPU, peakKiB: 0, exitStatus: 0)
    }
}
