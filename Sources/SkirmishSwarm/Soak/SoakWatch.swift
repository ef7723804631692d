import Foundation
import Logging
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire
import Synchronization

/// Watches a running swarm for a soak: every interval it samples the process and the run's figures, feeds the
/// `HealthMonitor` and checkpoints `summary.json` (written atomically, so a killed run leaves its latest figures).
///
/// Runs beside ``Swarm/run(progress:)`` in its own task and never touches an event loop except through
/// ``Swarm/snapshot()``; cancel the task to stop it.
public final class SoakWatch: Sendable {
    /// Where and how often to check.
    public struct Configuration: Sendable {
        /// The health checks' limits and the warm-up.
        public var policy: HealthPolicy
        /// Time between checks (a minute by default).
        public var interval: Duration
        /// The results folder the checkpoints go to.
        public var outDirectory: String
        /// The script's path, as the summary names it.
        public var scriptPath: String
        /// When the run started, as the summary reports it.
        public var startedAt: Date

        /// A configuration; checks run every 60 s unless `interval` says otherwise.
        public init(
            policy: HealthPolicy, interval: Duration = .seconds(60), outDirectory: String, scriptPath: String,
            startedAt: Date
        ) {
            self.policy = policy
            self.interval = interval
            self.outDirectory = outDirectory
            self.scriptPath = scriptPath
            self.startedAt = startedAt
        }
    }

    private struct State: Sendable {
        var monitor: HealthMonitor
        var timeline = RunTimeline(capacity: 500)
        var checks = 0
        var plannedPeak = 0
        var previousLateness: HistogramValue?
        var lastWriteError: String?
    }

    /// Where and how often the watch checks.
    public let configuration: Configuration
    private let swarm: Swarm
    private let exporterStats: @Sendable () -> ExporterStats?
    private let resources: @Sendable () -> ProcessResources.Reading
    private let start = ContinuousClock.now
    private let state: Mutex<State>
    private let logger: Logger

    /// A watch over `swarm`, whose clock starts now; `exporterStats` reads the exporter's stats (`nil`: no --push),
    /// `resources` reads the process (``ProcessResources/current()`` unless a test says otherwise). `logger` receives
    /// the watch's start and stop and every health check that changes status (a warning when one warns or fails, info
    /// when it passes again), and checkpoints that cannot be written.
    public init(
        swarm: Swarm, configuration: Configuration,
        exporterStats: @escaping @Sendable () -> ExporterStats? = { nil },
        resources: @escaping @Sendable () -> ProcessResources.Reading = { ProcessResources.current() },
        logger: Logger = Logger(label: "skirmish.soak")
    ) {
        var logger = logger
        if logger[metadataKey: "run"] == nil { logger[metadataKey: "run"] = "\(swarm.configuration.runID)" }
        self.logger = logger
        self.swarm = swarm
        self.configuration = configuration
        self.exporterStats = exporterStats
        self.resources = resources
        state = Mutex(State(monitor: HealthMonitor(policy: configuration.policy)))
    }

    /// Checks at once and then every interval until the task is cancelled; `onChange` is told each verdict whose
    /// status changed since the previous check.
    public func run(onChange: @escaping @Sendable (HealthVerdict) -> Void = { _ in }) async {
        var statuses: [HealthVerdict.Check: HealthVerdict.Status] = [:]
        var due = start
        logger.info(
            "soak watch started",
            metadata: [
                "interval.seconds": "\(configuration.interval.components.seconds)",
                "out": "\(configuration.outDirectory)",
            ])
        var writeError: String?
        while !Task.isCancelled {
            for verdict in await check() where statuses[verdict.check] != verdict.status {
                if statuses[verdict.check] != nil || verdict.status != .pending {
                    onChange(verdict)
                    log(verdict, was: statuses[verdict.check])
                }
                statuses[verdict.check] = verdict.status
            }
            let latestError = lastWriteError
            if latestError != writeError, let latestError {
                logger.warning(
                    "soak checkpoint not written",
                    metadata: ["out": "\(configuration.outDirectory)", "error": "\(latestError)"])
            }
            writeError = latestError
            due += configuration.interval
            // A periodic schedule fixed in advance: a slow check does not push the next ones later.
            try? await Task.sleep(until: max(due, ContinuousClock.now), clock: .continuous)
        }
        logger.info("soak watch stopped", metadata: ["checks": "\(state.withLock { $0.checks })"])
    }

    /// One line per health check whose status changed: warning when it warns or fails, info otherwise.
    private func log(_ verdict: HealthVerdict, was previous: HealthVerdict.Status?) {
        let level: Logger.Level = verdict.status == .warn || verdict.status == .fail ? .warning : .info
        logger.log(
            level: level, "health check \(verdict.status)",
            metadata: [
                "check": "\(verdict.check.rawValue)", "status": "\(verdict.status)",
                "was": "\(previous.map { "\($0)" } ?? "none")",
                "observed": "\(verdict.observed.map { "\($0)" } ?? "none")",
                "limit": "\(verdict.limit.map { "\($0)" } ?? "none")", "detail": "\(verdict.detail)",
            ])
    }

    /// Takes one sample now, judges it and writes the checkpoint; returns the verdicts.
    ///
    /// Once the plan's time is up the bots are leaving (their sockets closing, the run's final figures being built),
    /// which is no steady state: a check that comes that late (a busy machine delays the last one) takes no sample and
    /// returns the verdicts as they stand. A sample is kept only if the bots were still playing after it was read.
    @discardableResult
    public func check() async -> [HealthVerdict] {
        let current = { self.state.withLock { $0.monitor.verdicts } }
        guard swarm.isPlaying else { return current() }
        let snapshot = await swarm.snapshot()
        // Resident memory as the process uses it, not as the allocator caches it: a leak check must not fail on
        // glibc's arenas keeping freed pages (a starved process spreads its work, and that cache, over more threads).
        FreeHeap.release()
        let reading = resources()
        guard swarm.isPlaying else { return current() }
        let elapsed = (ContinuousClock.now - start).seconds
        let exporter = exporterStats()
        let legit = swarm.configuration.script.personas.filter(\.isLegit).map(\.name)
        let reader = SnapshotReader(snapshot: snapshot, legit: legit)
        let lateness = snapshot.histogram(SkirmishMetrics.tickLateness)
        let plan = swarm.configuration.plan
        let (summary, verdicts) = state.withLock { state -> (RunSummary, [HealthVerdict]) in
            let interval = lateness.map { current in state.previousLateness.map { current.subtracting($0) } ?? current }
            state.previousLateness = lateness
            state.plannedPeak = max(state.plannedPeak, plan.closedBots(at: Duration(seconds: elapsed)))
            let sample = HealthSample(
                seconds: elapsed, residentBytes: reading.residentBytes, openFiles: reading.openFiles,
                bots: Int(snapshot.gaugeTotal(SkirmishMetrics.botsConnected)),
                matchesCompleted: reader.total(SkirmishMetrics.matchesCompleted),
                desyncs: reader.total(SkirmishMetrics.desyncs), errors: reader.total(SkirmishMetrics.errors),
                handshakes: reader.total(SkirmishMetrics.handshakes), tickLatenessP99: interval?.quantile(0.99),
                exporterPushes: exporter.map { UInt64($0.pushes) },
                exporterFailures: exporter.map { UInt64($0.totalFailures) })
            let verdicts = state.monitor.record(sample)
            state.checks += 1
            state.timeline.record(snapshot)
            let outcome = SwarmOutcome(
                snapshot: snapshot, timeline: state.timeline, elapsed: Duration(seconds: elapsed),
                interrupted: false, peakBots: state.plannedPeak, desyncEpisodes: swarm.desyncEpisodes)
            var summary = RunSummary(
                outcome: outcome, configuration: swarm.configuration, scriptPath: configuration.scriptPath,
                startedAt: configuration.startedAt, exporter: exporter)
            summary.attach(report(state, .running))
            return (summary, verdicts)
        }
        do {
            try RunOutput.writeSummary(summary, to: configuration.outDirectory)
            state.withLock { $0.lastWriteError = nil }
        } catch {
            state.withLock { $0.lastWriteError = "\(error)" }
        }
        return verdicts
    }

    /// The soak section as of the latest check.
    public func report(state runState: SoakReport.State) -> SoakReport {
        state.withLock { report($0, runState) }
    }

    /// Why the latest checkpoint could not be written, if it could not.
    public var lastWriteError: String? { state.withLock { $0.lastWriteError } }

    private func report(_ state: State, _ runState: SoakReport.State) -> SoakReport {
        SoakReport(
            monitor: state.monitor, state: runState, checks: state.checks,
            checkIntervalSeconds: configuration.interval.seconds)
    }
}

extension RunSummary {
    /// Adds a soak's report; the run passes only if its health checks pass too.
    public mutating func attach(_ report: SoakReport) {
        soak = report
        passed = passed && report.passed
    }
}
