import Logging
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire
import Synchronization

/// A run of a script: one ``BotGroup`` per client loop, a controller that follows the load plan, and the metrics.
///
/// The swarm starts its own `ClientLoop`s (one I/O thread each, owning its bots' UDP sockets) and stops them when
/// it is released; TCP and WebSocket sessions use the SwiftNIO loops it is given.
///
/// The controller wakes every 100 ms, tells each group how many closed-model bots it should hold and hands it the
/// open-model arrivals of the next moment (each scheduled at its exact time on the group's loop). It samples the
/// merged metrics once a second for the progress line and the report's timeline. Cancelling the task that runs
/// ``run(progress:)`` ends the run early and still returns everything measured.
public final class Swarm: Sendable {
    /// What the swarm was created with.
    public let configuration: SwarmConfiguration
    private let groups: [NIOLoopBound<BotGroup>]
    private let loops: [ClientLoop]
    private let logger: Logger
    private let episodes: DesyncEpisodeLog
    /// The persona deal the bot groups follow, for the outcome's peaks per persona.
    private let personaDeal: PersonaDeal

    /// Creates the client loops and their groups; no bot starts before ``run(progress:)``. `group` carries the TCP
    /// and WebSocket sessions.
    ///
    /// `logger` receives the run's start and end with its settings, threshold aborts, desync episodes (one line per
    /// episode, with `bot.id`, `match.id`, `tick` and `part`, for the run's first 100; then at most one line per part
    /// every 10 s, with the `count` of episodes it stands for) and failed resumes and handshakes (at most one line per
    /// kind per loop every 10 s); its lines carry `run` and `shard`, and the bots' lines `persona` too.
    public init(
        configuration: SwarmConfiguration, group: any EventLoopGroup,
        logger: Logger = Logger(label: "skirmish.swarm")
    ) async throws {
        self.configuration = configuration
        var logger = logger
        if logger[metadataKey: "run"] == nil { logger[metadataKey: "run"] = "\(configuration.runID)" }
        logger[metadataKey: "shard"] = "\(configuration.plan.shard.description)"
        self.logger = logger
        var context = SwarmContext(
            personas: PersonaDeal(configuration.script.personas, plan: configuration.plan), seed: configuration.seed,
            constantLabels: configuration.constantLabels, target: configuration.target,
            alternates: configuration.alternates)
        context.catalogue = configuration.catalogue
        context.tagNames = configuration.script.tagNames
        context.protocolName = configuration.script.protocolName
        context.streamLoops = group
        context.logger = logger
        let settled = context
        episodes = context.episodes
        personaDeal = context.personas
        var loops: [ClientLoop] = []
        var groups: [NIOLoopBound<BotGroup>] = []
        do {
            for index in 0..<max(1, configuration.loops) {
                loops.append(try ClientLoop(name: "skirmish-bots-\(index)"))
            }
            for (index, loop) in loops.enumerated() {
                let count = loops.count
                groups.append(
                    try await loop.submit {
                        NIOLoopBound(
                            BotGroup(loop: loop, index: index, groupCount: count, context: settled), eventLoop: loop)
                    }.get())
            }
        } catch {
            // A later loop that could not start must not leave the earlier ones' threads behind.
            for loop in loops { loop.stop() }
            throw error
        }
        self.groups = groups
        self.loops = loops
        streamThreads = await LoopPrecedence.threadIDs(of: group)
    }

    deinit {
        for loop in loops { loop.stop() }
    }

    /// The run's first desync episodes so far, in full (at most 100).
    public var desyncEpisodes: [DesyncEpisode] { episodes.kept }

    private let playing = Atomic<Bool>(true)

    /// Whether the bots still play the plan: false from the moment the run's time is up (or it was cancelled or
    /// aborted) and the bots start leaving.
    public var isPlaying: Bool { playing.load(ordering: .acquiring) }

    /// The merged metrics of every loop, for the exporter (blocking: call it off the event loops).
    public var metricsSource: any MetricsSource { SwarmMetricsSource(groups: groups, loops: loops) }

    /// Runs the plan to its end (or until the task is cancelled) and returns what was measured.
    public func run(progress: @escaping @Sendable (SwarmProgress) -> Void = { _ in }) async -> SwarmOutcome {
        let plan = configuration.plan
        // The plan's clock starts once every loop has answered: a loop that is slow to answer (a busy machine) must
        // not eat the plan's first seconds before a single bot started.
        let cpuAtStart = await loopCPU()
        let start = NIODeadline.now()
        let wallStart = WallTime.milliseconds()
        var cpuBefore = cpuAtStart
        var timeline = RunTimeline(startMs: wallStart)
        let legit = configuration.script.personas.filter(\.isLegit).map(\.name)
        var judge = ThresholdJudge(thresholds: configuration.script.thresholds, legit: legit)
        var aborted: ThresholdJudge.Breach?
        var samples = RunSamples()
        var arrivalsUntil = Duration.zero
        var nextSample = Duration.seconds(1)
        var peak = 0
        var interrupted = false
        var previous: (at: Duration, snapshot: MetricsSnapshot)?
        // The population follows the plan on each loop's own thread (`BotGroup.follow`), not from this task.
        for (group, loop) in zip(groups, loops) { loop.execute { group.value.follow(plan, from: start) } }
        logger.info(
            "swarm started",
            metadata: [
                "script": "\(configuration.script.name)", "target": "\(configuration.target)",
                "bots.peak": "\(plan.peakClosedBots)", "duration.seconds": "\(plan.duration.components.seconds)",
                "loops": "\(loops.count)", "seed": "\(configuration.seed)",
                "shard.of": "\(plan.shard.fraction)",
            ])
        while true {
            let elapsed = Duration(NIODeadline.now() - start)
            if Task.isCancelled {
                interrupted = true
                break
            }
            if elapsed >= plan.duration { break }
            peak = max(peak, plan.closedBots(at: elapsed))
            let horizon = min(elapsed + .milliseconds(300), plan.duration)
            if horizon > arrivalsUntil {
                for arrival in plan.arrivals(from: arrivalsUntil, to: horizon) {
                    let index = arrival.number % groups.count
                    let group = groups[index]
                    let due = start + TimeAmount(arrival.at)
                    loops[index].scheduleTask(deadline: due) { group.value.arrive(arrival, now: .now()) }
                }
                arrivalsUntil = horizon
            }
            if elapsed >= nextSample {
                nextSample = elapsed + .seconds(1)
                let snapshot = await collect(at: wallStart + Int64(elapsed.nanoseconds / 1_000_000))
                let live = await liveBots()
                let cpu = await loopCPU()
                timeline.record(snapshot)
                samples.record(snapshot, at: elapsed.seconds, personas: legit)
                if !judge.isIdle, let breach = judge.observe(snapshot, at: elapsed.seconds) {
                    aborted = breach
                    logger.error(
                        "threshold breached: aborting the run",
                        metadata: [
                            "threshold": "\(breach.threshold)", "at.seconds": "\(breach.atSeconds)",
                            "window": "\(breach.windowStartSeconds)-\(breach.windowEndSeconds)",
                            "value": "\(breach.value.map { "\($0)" } ?? "no sample")",
                        ])
                }
                progress(
                    SwarmProgress(
                        elapsed: elapsed, duration: plan.duration, bots: live, snapshot: snapshot,
                        previous: previous.map { (elapsed - $0.at, $0.snapshot) },
                        busiestLoop: Self.busiest(from: cpuBefore, to: cpu, over: elapsed - (previous?.at ?? .zero))))
                previous = (elapsed, snapshot)
                cpuBefore = cpu
                if aborted != nil { break }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        playing.store(false, ordering: .releasing)
        let cpuAtEnd = await loopCPU()
        let elapsedBeforeStop = Duration(NIODeadline.now() - start)
        // The most bots any loop was asked for: what the controllers followed, however rarely this task woke.
        var scenarioPeaks = [Int](repeating: 0, count: plan.scenarios.count)
        for (group, loop) in zip(groups, loops) {
            let (total, each) =
                (try? await loop.submit { (group.value.peakTarget, group.value.peakTargets) }.get()) ?? (0, [])
            peak = max(peak, total)
            for (scenario, count) in each.enumerated() where scenario < scenarioPeaks.count {
                scenarioPeaks[scenario] = max(scenarioPeaks[scenario], count)
            }
        }
        // Every group stops starting matches before any bot says goodbye (see `BotGroup.windDown()`).
        for (group, loop) in zip(groups, loops) { _ = try? await loop.submit { group.value.windDown() }.get() }
        for (group, loop) in zip(groups, loops) { _ = try? await loop.submit { group.value.stop() }.get() }
        let elapsed = Duration(NIODeadline.now() - start)
        let final = await collect(at: WallTime.milliseconds())
        timeline.record(final)
        judge.finish(final, at: elapsed.seconds)
        samples.record(final, at: elapsed.seconds, personas: legit)
        samples.finish()
        for (part, count) in episodes.owed() {
            logger.warning(
                "desync episodes since the last line",
                metadata: ["part": "\(part)", "count": "\(count)", "suppressed": "\(count)"])
        }
        logger.info(
            "swarm finished",
            metadata: [
                "elapsed.seconds": "\(elapsed.components.seconds)", "interrupted": "\(interrupted)",
                "aborted": "\(aborted != nil)", "bots.peak": "\(peak)",
            ])
        return SwarmOutcome(
            snapshot: final, timeline: timeline, elapsed: elapsed, interrupted: interrupted, peakBots: peak,
            busiestLoop: Self.busiest(from: cpuAtStart, to: cpuAtEnd, over: elapsedBeforeStop), aborted: aborted,
            windows: judge.windowRecords, samples: samples, desyncEpisodes: episodes.kept,
            personaPeaks: personaDeal.peaks(of: scenarioPeaks))
    }

    /// CPU seconds each bot loop's thread has used so far.
    private func loopCPU() async -> [Double] {
        var seconds: [Double] = []
        for (group, loop) in zip(groups, loops) {
            seconds.append((try? await loop.submit { group.value.threadCPUSeconds() }.get()) ?? 0)
        }
        return seconds
    }

    /// The largest share of one core any loop used between two readings `interval` apart.
    static func busiest(from before: [Double], to after: [Double], over interval: Duration) -> Double? {
        let seconds = interval.seconds
        guard seconds > 0.05, before.count == after.count, !before.isEmpty else { return nil }
        return zip(before, after).map { min(1, max(0, ($1 - $0) / seconds)) }.max()
    }

    /// Runs `body` on each client loop's thread and returns what each returned: for per-thread probes such as the
    /// benchmark's allocation counter.
    public func onEachLoop<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> [T] {
        var results: [T] = []
        for loop in loops {
            if let result = try? await loop.submit(body).get() { results.append(result) }
        }
        return results
    }

    /// The merged metrics of every loop now.
    public func snapshot() async -> MetricsSnapshot { await collect(at: WallTime.milliseconds()) }

    /// Moves every other thread of this process out of the way of the threads that carry bots — the client loops and
    /// the stream sessions' event loops (see ``LoopPrecedence``); returns how many moved. For a process that is the
    /// swarm alone: a server in the same process would yield to its bots too.
    @discardableResult
    package func yieldToLoops() -> Int {
        LoopPrecedence.yield(toLoops: loops, threads: streamThreads)
    }

    /// The kernel ids of the stream sessions' event loop threads (they carry the TCP and WebSocket bots).
    private let streamThreads: [Int32]

    private func collect(at milliseconds: Int64) async -> MetricsSnapshot {
        var merged = MetricsSnapshot()
        for (group, loop) in zip(groups, loops) {
            // The loop only hands its figures off; they are put together here, off the bots' thread.
            if let part = try? await loop.submit({ group.value.shard.handOff(at: milliseconds) }).get() {
                merged.merge(part.snapshot())
            }
        }
        return merged
    }

    private func liveBots() async -> Int {
        var total = 0
        for (group, loop) in zip(groups, loops) {
            total += (try? await loop.submit { group.value.liveBots }.get()) ?? 0
        }
        return total
    }
}

/// Reads every group's metrics for the exporter thread, which may block.
struct SwarmMetricsSource: MetricsSource {
    let groups: [NIOLoopBound<BotGroup>]
    let loops: [ClientLoop]

    func collect() -> MetricsSnapshot {
        let now = WallTime.milliseconds()
        var merged = MetricsSnapshot()
        for (group, loop) in zip(groups, loops) {
            if let part = try? loop.submit({ group.value.shard.handOff(at: now) }).wait() {
                merged.merge(part.snapshot())
            }
        }
        return merged
    }
}
