import Foundation
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// The soak's health rules on made-up series: what "flat after warm-up" means, and the budgets.
@Suite struct HealthMonitorTests {
    static let mib = 1_048_576.0

    /// A policy with a 60 s warm-up and checks every 10 s.
    static func policy() -> HealthPolicy {
        var policy = HealthPolicy(warmUp: 60)
        policy.minimumSamples = 5
        policy.minimumSpan = 30
        return policy
    }

    /// Samples every 10 s for `seconds`, memory and descriptors from the given functions of time.
    static func feed(
        _ monitor: inout HealthMonitor, seconds: Int, memory: (Double) -> Double, files: (Double) -> Int = { _ in 120 }
    ) -> [HealthVerdict] {
        var verdicts: [HealthVerdict] = []
        for t in stride(from: 0, through: seconds, by: 10) {
            let time = Double(t)
            verdicts = monitor.record(
                HealthSample(
                    seconds: time, residentBytes: UInt64(memory(time)), openFiles: files(time), bots: 100,
                    matchesCompleted: UInt64(t), handshakes: UInt64(t) + 1))
        }
        return verdicts
    }

    static func verdict(_ check: HealthVerdict.Check, in verdicts: [HealthVerdict]) throws -> HealthVerdict {
        try #require(verdicts.first { $0.check == check })
    }

    @Test func theilSenIgnoresOutliersThatLeastSquaresWouldFollow() throws {
        var points = (0..<20).map { (t: Double($0), value: 100.0) }
        points[3].value = 10_000
        points[17].value = 9_000
        points[18].value = 50_000
        let trend = try #require(Trend(points))
        #expect(trend.slopePerSecond == 0)
        #expect(trend.level == 100)
        let line: [(t: Double, value: Double)] = (0..<10).map { index in
            let t = Double(index) * 2
            return (t: t, value: 5 + 3 * t)
        }
        let rising = try #require(Trend(line))
        #expect(abs(rising.slopePerSecond - 3) < 1e-9)
        #expect(abs(rising.growth - 54) < 1e-9)
        #expect(Trend([(t: 1, value: 2)]) == nil)
        #expect(Trend([(t: 1, value: 2), (t: 1, value: 3)]) == nil)
    }

    @Test func memoryThatGrowsDuringWarmUpAndThenHoldsIsFlat() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        // Climbs 200 MiB during the ramp, then wobbles ±2 MiB with one 80 MiB spike.
        let verdicts = Self.feed(&monitor, seconds: 600) { t in
            if t < 60 { return 50 * Self.mib + t / 60 * 200 * Self.mib }
            if t == 300 { return 330 * Self.mib }
            return 250 * Self.mib + (Int(t) % 20 == 0 ? 2 : -2) * Self.mib
        }
        let memory = try Self.verdict(.memory, in: verdicts)
        #expect(memory.status == .pass, "\(memory.detail)")
        #expect(try Self.verdict(.openFiles, in: verdicts).status == .pass)
        #expect(monitor.passed)
    }

    @Test func aSteadyLeakAfterWarmUpFailsOnceItOutgrowsTheTolerance() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        // 100 MiB, growing 12 MiB a minute after warm-up: 108 MiB over the 9-minute window, tolerance 32 MiB.
        let verdicts = Self.feed(&monitor, seconds: 600) { t in 100 * Self.mib + max(0, t - 60) / 60 * 12 * Self.mib }
        let memory = try Self.verdict(.memory, in: verdicts)
        #expect(memory.status == .fail, "\(memory.detail)")
        #expect(abs((memory.observed ?? 0) - 108 * Self.mib) < Self.mib)
        #expect(memory.limit == 32 * Self.mib)
        #expect(!monitor.passed)
        // The same leak over a shorter window stays inside the tolerance: a longer run detects a smaller leak.
        var short = HealthMonitor(policy: Self.policy())
        let early = Self.feed(&short, seconds: 180) { t in 100 * Self.mib + max(0, t - 60) / 60 * 12 * Self.mib }
        #expect(try Self.verdict(.memory, in: early).status == .pass)
    }

    @Test func relativeToleranceScalesWithTheLevel() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        // 2 GiB growing 100 MiB across the window: under 10 % of the level, so flat.
        let verdicts = Self.feed(&monitor, seconds: 600) { t in 2_048 * Self.mib + max(0, t - 60) / 540 * 100 * Self.mib
        }
        #expect(try Self.verdict(.memory, in: verdicts).status == .pass)
    }

    @Test func descriptorsThatKeepClimbingFail() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        let verdicts = Self.feed(&monitor, seconds: 600, memory: { _ in 100 * Self.mib }, files: { 200 + Int($0 / 10) })
        let files = try Self.verdict(.openFiles, in: verdicts)
        #expect(files.status == .fail, "\(files.detail)")
        #expect(try Self.verdict(.memory, in: verdicts).status == .pass)
    }

    @Test func flatnessIsPendingUntilTheWindowHasEnoughSamples() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        var verdicts = Self.feed(&monitor, seconds: 50) { _ in 100 * Self.mib }
        #expect(try Self.verdict(.memory, in: verdicts).status == .pending)
        #expect(try Self.verdict(.memory, in: verdicts).detail.contains("warming up"))
        #expect(monitor.passed)
        // Samples after warm-up: 60, 70, 80, 90 (four of five needed).
        var late = HealthMonitor(policy: Self.policy())
        verdicts = Self.feed(&late, seconds: 90) { _ in 100 * Self.mib }
        #expect(try Self.verdict(.memory, in: verdicts).status == .pending)
        verdicts = late.record(HealthSample(seconds: 100, residentBytes: UInt64(100 * Self.mib), openFiles: 120))
        #expect(try Self.verdict(.memory, in: verdicts).status == .pass)
    }

    @Test func aClosingRampDownIsOutsideTheSteadyWindow() throws {
        var policy = Self.policy()
        policy.steadyUntil = 500
        var monitor = HealthMonitor(policy: policy)
        // Descriptors fall as bots leave after 500 s, and one last surge at the very end is ignored too.
        let verdicts = Self.feed(
            &monitor, seconds: 600, memory: { _ in 100 * Self.mib },
            files: { t in t <= 500 ? 300 : (t == 600 ? 900 : 50) })
        #expect(try Self.verdict(.openFiles, in: verdicts).status == .pass)
    }

    @Test func theDefaultWindowFollowsTheProfile() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(
            """
            name: w
            profile: [{ramp: {to: 100, over: 1m}}, {hold: {for: 58m}}, {ramp: {to: 0, over: 1m}}]
            personas: [{name: a, weight: 1, game: puck}]
            """, file: "w.yaml")
        let plan = try LoadPlan(script: script)
        let policy = HealthPolicy(plan: plan)
        #expect(policy.warmUp == 360) // a tenth of the hour beats the ramp plus 30 s
        #expect(policy.steadyUntil == 3_540)
        let eight = HealthPolicy(plan: try LoadPlan(script: script, overrides: .init(duration: .seconds(8 * 3_600))))
        #expect(eight.warmUp == 1_800)
        let brief = try Catalogue.builtIn.scriptLoader.parse(
            """
            name: b
            profile: [{ramp: {to: 100, over: 1m}}, {hold: {for: 1m}}]
            personas: [{name: a, weight: 1, game: puck}]
            """, file: "b.yaml")
        let short = HealthPolicy(plan: try LoadPlan(script: brief))
        #expect(short.warmUp == 60) // never more than half the run
        #expect(short.steadyUntil == nil)
    }

    @Test func anyDesyncFailsByDefault() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        var verdicts = monitor.record(HealthSample(seconds: 10, matchesCompleted: 40, handshakes: 80))
        #expect(try Self.verdict(.desyncs, in: verdicts).status == .pass)
        verdicts = monitor.record(HealthSample(seconds: 20, matchesCompleted: 90, desyncs: 1, handshakes: 180))
        let desyncs = try Self.verdict(.desyncs, in: verdicts)
        #expect(desyncs.status == .fail)
        #expect(desyncs.detail.contains("1 desyncs in 90"))
        var lenient = Self.policy()
        lenient.maxDesyncRate = 0.02
        var allowing = HealthMonitor(policy: lenient)
        verdicts = allowing.record(HealthSample(seconds: 20, matchesCompleted: 90, desyncs: 1, handshakes: 180))
        #expect(try Self.verdict(.desyncs, in: verdicts).status == .pass)
    }

    @Test func theErrorBudgetIsJudgedOverTheWholeRun() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        var verdicts = monitor.record(HealthSample(seconds: 10))
        #expect(try Self.verdict(.errorBudget, in: verdicts).status == .pending)
        // A burst (a server restart): 30 errors in 1,000 handshakes is over 1 %...
        verdicts = monitor.record(HealthSample(seconds: 20, errors: 30, handshakes: 1_000))
        #expect(try Self.verdict(.errorBudget, in: verdicts).status == .fail)
        // ...and back within budget once the run has gone on long enough.
        verdicts = monitor.record(HealthSample(seconds: 3_600, errors: 31, handshakes: 10_000))
        let budget = try Self.verdict(.errorBudget, in: verdicts)
        #expect(budget.status == .pass)
        #expect(budget.observed == 31.0 / 10_000)
    }

    @Test func tickLatenessMayMissItsBudgetInAFewIntervalsOnly() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        // Before warm-up nothing counts, however late.
        for t in stride(from: 0, to: 60, by: 10) {
            monitor.record(HealthSample(seconds: Double(t), tickLatenessP99: 0.050))
        }
        var verdicts: [HealthVerdict] = []
        for index in 0..<40 {
            let late = index == 7 || index == 20
            verdicts = monitor.record(
                HealthSample(seconds: 60 + Double(index) * 10, tickLatenessP99: late ? 0.009 : 0.001))
        }
        #expect(try Self.verdict(.tickLateness, in: verdicts).status == .pass)
        #expect(monitor.latenessIntervals == 40)
        #expect(monitor.latenessOverBudget == 2)
        for index in 40..<46 {
            verdicts = monitor.record(HealthSample(seconds: 60 + Double(index) * 10, tickLatenessP99: 0.02))
        }
        #expect(try Self.verdict(.tickLateness, in: verdicts).status == .fail)
    }

    @Test func aCollectorOutageIsReportedAsAWarningWithItsSpan() throws {
        var monitor = HealthMonitor(policy: Self.policy())
        func sample(_ t: Double, pushes: UInt64, failures: UInt64) -> [HealthVerdict] {
            monitor.record(HealthSample(seconds: t, exporterPushes: pushes, exporterFailures: failures))
        }
        _ = sample(0, pushes: 0, failures: 0)
        #expect(try Self.verdict(.collector, in: sample(60, pushes: 12, failures: 0)).status == .pass)
        _ = sample(120, pushes: 12, failures: 9)
        let during = try Self.verdict(.collector, in: sample(180, pushes: 12, failures: 20))
        #expect(during.status == .warn)
        #expect(monitor.outages == [CollectorOutage(from: 60, to: 180, failures: 20, ongoing: true)])
        let after = try Self.verdict(.collector, in: sample(240, pushes: 15, failures: 21))
        #expect(after.status == .warn)
        #expect(after.detail.contains("60 s–4.0 min (21 failures)"))
        #expect(monitor.outages == [CollectorOutage(from: 60, to: 240, failures: 21, ongoing: false)])
        #expect(monitor.passed)
        // No --push, no collector check.
        var quiet = HealthMonitor(policy: Self.policy())
        #expect(quiet.record(HealthSample(seconds: 1)).allSatisfy { $0.check != .collector })
    }

    @Test func samplesStayBoundedAndKeepTheirEnds() {
        var monitor = HealthMonitor(policy: Self.policy(), capacity: 50)
        for t in 0..<2_000 {
            monitor.record(HealthSample(seconds: Double(t), residentBytes: 1_000, openFiles: 10))
        }
        #expect(monitor.samples.count <= 50)
        #expect(monitor.samples.first?.seconds == 0)
        #expect(monitor.samples.last?.seconds == 1_999)
        #expect(monitor.first?.seconds == 0)
    }

    @Test func procStatusParsing() {
        let status = "Name:\tskirmish\nVmPeak:\t  900000 kB\nVmRSS:\t   41234 kB\nThreads:\t7\n"
        #expect(ProcessResources.residentBytes(status: status) == 41_234 * 1_024)
        #expect(ProcessResources.residentBytes(status: "Name:\tx\n") == nil)
        #expect(ProcessResources.residentBytes(status: "VmRSS:\tlots kB\n") == nil)
        let now = ProcessResources.current()
        #expect((now.residentBytes ?? 0) > 1_048_576)
        #expect((now.openFiles ?? 0) >= 3)
    }
}

/// The soak section in the run's files: the HTML report lists the health checks beside the thresholds.
@Suite struct SoakReportTests {
    @Test func theReportShowsJudgedHealthChecksBesideTheThresholds() throws {
        var monitor = HealthMonitor(policy: HealthMonitorTests.policy())
        monitor.record(HealthSample(seconds: 10, matchesCompleted: 3, desyncs: 1, handshakes: 10))
        let report = SoakReport(monitor: monitor, state: .finished, checks: 1, checkIntervalSeconds: 10)
        #expect(!report.passed)
        #expect(report.lines().contains { $0.hasPrefix("FAIL  desyncs: 1 desyncs in 3") })
        let script = try Catalogue.builtIn.scriptLoader.parse(
            "name: r\npersonas: [{name: a, weight: 1, game: puck}]\nthresholds: {desyncs: \"== 0\"}", file: "r.yaml")
        let configuration = SwarmConfiguration(
            script: script, plan: try LoadPlan(script: script),
            target: try Target(parsing: "udp://127.0.0.1:4000"), seed: 1, runID: "r", loops: 1)
        let outcome = SwarmOutcome(
            snapshot: MetricsSnapshot(), timeline: RunTimeline(), elapsed: .seconds(10), interrupted: false,
            peakBots: 0)
        var summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "r.yaml", startedAt: Date(), exporter: nil)
        summary.attach(report)
        #expect(!summary.passed)
        let page = RunOutput.reportSummary(of: summary)
        let names = page.verdicts.map(\.name)
        #expect(names.contains("desyncs"))
        #expect(names.contains("health desyncs"))
        #expect(!names.contains("health memory")) // still pending: left out
        let decoded = try JSONDecoder().decode(RunSummary.self, from: JSONEncoder().encode(summary))
        #expect(decoded.soak == report)
    }
}
