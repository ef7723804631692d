import Foundation
import Logging
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishTelemetry
import SkirmishTestSupport
import SkirmishWire
import Synchronization
import Testing

@testable import SkirmishScript
@testable import SkirmishServer
@testable import SkirmishSwarm

/// What a swarm and its exporter log, against the real server on loopback: a collector outage is one warning and its
/// end one recovery line; a desync episode is one warning naming the bot, the match and the tick.
@Suite(.serialized) struct SwarmLogTests {
    /// Polls `condition` every 20 ms until it holds or `limit` passes; whether it held.
    static func eventually(within limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// A server that disagrees with every bot: the run's first 100 episodes get a line each (as `summary.json` keeps
    /// them), the rest one line per part per 10 s with their count, and the lines owed at the end are written then;
    /// every episode is in exactly one line's count (a hostile server made 869 lines in 8 s without this).
    @Test func desyncLinesPastTheFirstHundredAreRateLimitedPerPartAndAddUp() {
        let capture = LogCapture()
        let clock = Mutex(Duration.zero)
        let episodes = DesyncEpisodeLog { clock.withLock { $0 } }
        let persona = Persona(name: "chaser", gameName: "puck", behavior: BehaviorName(rawValue: "chaser"))
        let meters = Meters(
            shard: MetricsShard(constantLabels: Labels([:])), spec: persona,
            plan: Meters.Plan(description: SnapConnection.description), logger: capture.logger("skirmish.swarm"),
            episodes: episodes)
        // 869 episodes over 8 s, two parts, then 3 more at 12 s.
        for index in 0..<869 {
            clock.withLock { $0 = .milliseconds(index * 8_000 / 869) }
            meters.desync(
                Desync(part: index % 3 == 0 ? "puck" : "paddles", tick: UInt32(index)), detectionSeconds: 0.01,
                bot: index % 24, match: 1, rttSeconds: 0.02)
        }
        let early = capture.entries(startingWith: "desync")
        #expect(early.count == 102, "100 in full, then the first of each part at once")
        clock.withLock { $0 = .seconds(12) }
        for part in ["puck", "paddles", "paddles"] {
            meters.desync(Desync(part: part, tick: 9_999), detectionSeconds: 0.01, bot: 1, match: 1, rttSeconds: 0.02)
        }
        let lines = capture.entries(startingWith: "desync")
        #expect(lines.count == 104, "one more line per part after the interval, none for the third episode")
        let owed = episodes.owed()
        #expect(owed.map(\.count) == [1], "the third is owed at the end")
        let counted =
            lines.reduce(0) { $0 + (Int($1.metadata["count"] ?? "1") ?? 0) } + owed.reduce(0) { $0 + $1.count }
        #expect(counted == 872)
        #expect(lines.prefix(100).allSatisfy { $0.metadata["count"] == nil && $0.metadata["tick"] != nil })
        #expect(
            lines.dropFirst(100).allSatisfy { $0.metadata["count"] != nil }, "every rate-limited line says its count")
        #expect(episodes.kept.count == DesyncEpisodeLog.capacity)
    }

    /// A swarm of one Puck chaser, planned for `duration`, aimed where nothing listens (port 9 on loopback).
    static func unanswered(for duration: Duration, runID: String, group: MultiThreadedEventLoopGroup) async throws
        -> Swarm
    {
        let script = try Self.script(bots: 1)
        let plan = try LoadPlan(script: script, overrides: .init(duration: duration))
        return try await Swarm(
            configuration: SwarmConfiguration(
                script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: 9), seed: 1,
                runID: runID, loops: 1),
            group: group)
    }

    static func script(bots: Int) throws -> Script {
        try Catalogue.builtIn.scriptLoader.parse(
            """
            name: logs
            profile: [{ramp: {to: \(bots), over: 1s}}, {hold: {for: 5m}}]
            personas: [{name: chaser, game: puck, behavior: chaser}]
            """, file: "logs.yaml")
    }

    /// The recovery line counts every point the outage held back: the one whose push failed first and each one
    /// collected while the collector stayed down.
    @Test(.timeLimit(.minutes(2)))
    func aRecoveryCountsEveryPointTheOutageHeldBack() async throws {
        let capture = LogCapture()
        let sink = try PushSink.down()
        let port = sink.port
        let collected = Mutex(0)
        // Collections only on demand (the interval is an hour), so the test knows how many there were.
        let exporter = Exporter(
            targets: [try PushTarget(parsing: "http://127.0.0.1:\(port)/api/v1/import/prometheus", format: .vm)],
            source: ClosureMetricsSource {
                collected.withLock { $0 += 1 }
                return MetricsSnapshot()
            }, interval: .seconds(3_600), runID: "held", shard: "0",
            configuration: ExporterConfiguration(
                backoffBase: .milliseconds(20), backoffCap: .milliseconds(50), finalPushTimeout: .seconds(5)),
            logger: capture.logger("skirmish.exporter"))
        exporter.start()
        exporter.pushNow()
        #expect(await Self.eventually(within: .seconds(30)) { exporter.stats.totalFailures >= 1 })
        for expected in 2...3 {
            exporter.pushNow()
            #expect(await Self.eventually(within: .seconds(30)) { collected.withLock { $0 } == expected })
        }
        try sink.listenAndServe()
        #expect(
            await Self.eventually(within: .seconds(30)) { !capture.entries(startingWith: "collector reco").isEmpty })
        await Task.detached { exporter.stop(finalPush: false) }.value
        sink.close()
        let recovery = try #require(capture.entries(startingWith: "collector recovered").first)
        #expect(recovery.metadata["buffered.points"] == "3", "\(recovery)")
        #expect((recovery.metadata["failed.attempts"].flatMap(Int.init) ?? 0) >= 1)
    }

    @Test(.timeLimit(.minutes(2)))
    func aCollectorOutageIsOneWarningAndItsRecoveryOneInfoLine() async throws {
        let capture = LogCapture()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.tcp = nil
        serverConfiguration.http = nil
        let server = try await ReferenceServer.start(
            configuration: serverConfiguration, group: group, logger: capture.logger("skirmish.server"))
        let udp = try #require(server.addresses.udp?.port)
        let script = try Self.script(bots: 4)
        let plan = try LoadPlan(script: script, overrides: .init(duration: .seconds(90)))
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: udp), seed: 5,
            runID: "outage", loops: 1)
        let swarm = try await Swarm(
            configuration: configuration, group: group, logger: capture.logger("skirmish.swarm"))
        // A loopback port held with nothing listening: connections are refused until the sink comes up on it.
        let sink = try PushSink.down()
        let port = sink.port
        let exporter = Exporter(
            targets: [try PushTarget(parsing: "http://127.0.0.1:\(port)/api/v1/import/prometheus", format: .vm)],
            source: swarm.metricsSource, interval: .milliseconds(250), runID: "outage", shard: "0",
            configuration: ExporterConfiguration(
                backoffBase: .milliseconds(50), backoffCap: .milliseconds(200), finalPushTimeout: .seconds(5)),
            logger: capture.logger("skirmish.exporter"))
        let run = Task { await swarm.run() }
        exporter.start()

        #expect(
            await Self.eventually(within: .seconds(30)) { !capture.entries(startingWith: "collector unre").isEmpty })
        // The collector stays down for several more attempts: still one warning.
        #expect(await Self.eventually(within: .seconds(30)) { exporter.stats.totalFailures >= 5 })
        try sink.listenAndServe()
        #expect(
            await Self.eventually(within: .seconds(30)) { !capture.entries(startingWith: "collector reco").isEmpty })
        #expect(await Self.eventually(within: .seconds(30)) { !sink.bodies.isEmpty })
        run.cancel()
        let outcome = await run.value
        await Task.detached { exporter.stop(finalPush: true) }.value
        sink.close()
        await server.shutdown()
        try await group.shutdownGracefully()

        let outages = capture.entries(startingWith: "collector unreachable")
        #expect(outages.count == 1, "\(outages)")
        let outage = try #require(outages.first)
        #expect(outage.level == .warning)
        #expect(outage.label == "skirmish.exporter")
        #expect(outage.metadata["run"] == "outage" && outage.metadata["shard"] == "0")
        #expect(outage.metadata["reason"] == "connect", "\(outage)")
        let recoveries = capture.entries(startingWith: "collector recovered")
        #expect(recoveries.count == 1, "\(recoveries)")
        let recovery = try #require(recoveries.first)
        #expect(recovery.level == .info)
        #expect((recovery.metadata["failed.attempts"].flatMap(Int.init) ?? 0) >= 5)
        #expect((recovery.metadata["buffered.points"].flatMap(Int.init) ?? 0) >= 1)
        #expect((recovery.metadata["outage.seconds"].flatMap(Double.init) ?? 0) > 0)
        #expect(outage.at < recovery.at)
        // The swarm's own start and end, with the run's settings.
        let started = try #require(capture.entries(startingWith: "swarm started").first)
        #expect(started.metadata["run"] == "outage" && started.metadata["shard"] == "0")
        #expect(started.metadata["bots.peak"] == "4")
        let finished = try #require(capture.entries(startingWith: "swarm finished").first)
        #expect(finished.metadata["interrupted"] == "true")
        #expect(outcome.interrupted)
        #expect(capture.entries(startingWith: "exporter started").count == 1)
        #expect(capture.entries(startingWith: "exporter stopped").count == 1)
    }

    @Test(.timeLimit(.minutes(2)))
    func aDesyncEpisodeIsOneWarningWithTheBotTheMatchAndTheTick() async throws {
        let capture = LogCapture()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.udp = nil
        serverConfiguration.http = nil
        let server = try await ReferenceServer.start(configuration: serverConfiguration, group: group)
        let serverAddress = try #require(server.addresses.tcp)
        // Exactly one snapshot, the first of play from the 120th the server sends on, has its state hash flipped: its receiver's replica
        // disagrees once, and agrees again with the next snapshot.
        let seen = Mutex(0)
        let tampered = Mutex<UInt32?>(nil)
        let proxy = try await TamperingProxy.start(to: serverAddress, group: group) { message in
            guard case .tableSnapshot(var snapshot) = message else { return [message] }
            let count = seen.withLock { count in
                count += 1
                return count
            }
            // Only a snapshot of play: a scoring tick's extra snapshot repeats its tick, and its receiver ignores
            // a snapshot no newer than the last (under load the 120th was sometimes such a repeat, never checked).
            guard count >= 120, snapshot.phase == .playing,
                tampered.withLock({ tick in
                    guard tick == nil else { return false }
                    tick = snapshot.tick
                    return true
                })
            else { return [message] }
            snapshot.stateHash ^= 0x5A5A
            return [.tableSnapshot(snapshot)]
        }
        let script = try Self.script(bots: 2)
        let plan = try LoadPlan(script: script, overrides: .init(duration: .seconds(60)))
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .tcp, host: "127.0.0.1", port: proxy.port), seed: 5,
            runID: "desync", loops: 1)
        let swarm = try await Swarm(
            configuration: configuration, group: group, logger: capture.logger("skirmish.swarm"))
        let run = Task { await swarm.run() }
        #expect(await Self.eventually(within: .seconds(60)) { tampered.withLock { $0 } != nil })
        // Some more snapshots after the tampered one, so that a second episode (if there were one) would show.
        let after = seen.withLock { $0 }
        #expect(await Self.eventually(within: .seconds(30)) { seen.withLock { $0 } >= after + 240 })
        run.cancel()
        let outcome = await run.value
        await proxy.close()
        await server.shutdown()
        try await group.shutdownGracefully()

        let counted = outcome.snapshot.counterTotal(SkirmishMetrics.desyncs)
        #expect(counted == 1)
        let warnings = capture.entries(startingWith: "desync")
        #expect(warnings.count == 1, "\(warnings)")
        let warning = try #require(warnings.first)
        #expect(warning.level == .warning)
        #expect(warning.metadata["part"] == "hash")
        #expect(warning.metadata["tick"] == tampered.withLock { $0 }.map { "\($0)" })
        #expect(warning.metadata["persona"] == "chaser" && warning.metadata["game"] == "puck")
        #expect(warning.metadata["run"] == "desync" && warning.metadata["shard"] == "0")
        let bot = try #require(warning.metadata["bot.id"].flatMap(Int.init))
        #expect(bot >= 0)
        let match = try #require(warning.metadata["match.id"].flatMap(UInt32.init))
        #expect(match != 0)
    }

    @Test(.timeLimit(.minutes(2)))
    func aFailingHealthCheckIsOneWarningWhenItTurns() async throws {
        let capture = LogCapture()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // No bot starts: the watch only reads the (empty) figures and the process.
        let swarm = try await Self.unanswered(for: .seconds(60), runID: "soak-logs", group: group)
        var policy = HealthPolicy(warmUp: 0)
        policy.minimumSamples = 3
        policy.minimumSpan = 0
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-logs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Resident memory that grows by 100 MiB at every check: the memory check fails once it has its samples.
        let readings = Mutex<UInt64>(0)
        let watch = SoakWatch(
            swarm: swarm,
            configuration: SoakWatch.Configuration(
                policy: policy, interval: .milliseconds(50), outDirectory: directory.path, scriptPath: "logs.yaml",
                startedAt: Date()),
            resources: {
                let count = readings.withLock { count in
                    count += 1
                    return count
                }
                return ProcessResources.Reading(residentBytes: 100_000_000 + count * 104_857_600, openFiles: 20)
            },
            logger: capture.logger("skirmish.soak"))
        let running = Task { await watch.run() }
        #expect(
            await Self.eventually(within: .seconds(30)) { !capture.entries(startingWith: "health check fail").isEmpty })
        // More checks while it keeps failing: still one line.
        let checks = readings.withLock { $0 }
        #expect(await Self.eventually(within: .seconds(30)) { readings.withLock { $0 } >= checks + 5 })
        running.cancel()
        await running.value
        try await group.shutdownGracefully()

        let failing = capture.entries(startingWith: "health check fail")
        #expect(failing.count == 1, "\(failing)")
        let line = try #require(failing.first)
        #expect(line.level == .warning)
        #expect(line.metadata["check"] == "memory" && line.metadata["status"] == "fail")
        #expect(line.metadata["was"] == "pending")
        #expect(line.metadata["run"] == "soak-logs")
        #expect(capture.entries(startingWith: "soak watch started").count == 1)
        #expect(capture.entries(startingWith: "soak watch stopped").count == 1)
        // A check that passes says so at info, never as a warning.
        #expect(capture.entries(startingWith: "health check pass").allSatisfy { $0.level == .info })
    }

    /// The bots' wind-down is no steady state: a check that comes after the plan's end (a busy machine delays the
    /// last one into it, while sockets close and the final figures are built) takes no sample, so it can neither
    /// fail the memory check nor stand as the run's last reading.
    @Test(.timeLimit(.minutes(2)))
    func aCheckAfterThePlansEndTakesNoSample() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let swarm = try await Self.unanswered(for: .seconds(1), runID: "soak-end", group: group)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-end-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let readings = Mutex(0)
        let watch = SoakWatch(
            swarm: swarm,
            configuration: SoakWatch.Configuration(
                policy: HealthPolicy(warmUp: 0), interval: .seconds(60), outDirectory: directory.path,
                scriptPath: "logs.yaml", startedAt: Date()),
            resources: {
                readings.withLock { $0 += 1 }
                return ProcessResources.Reading(residentBytes: 100_000_000, openFiles: 20)
            })
        #expect(swarm.isPlaying)
        await watch.check()
        #expect(readings.withLock { $0 } == 1)
        _ = await swarm.run()
        #expect(!swarm.isPlaying)
        await watch.check()
        #expect(readings.withLock { $0 } == 1, "a sample was read after the plan's end")
        let report = watch.report(state: .finished)
        #expect(report.checks == 1)
        #expect(report.resources.residentBytesEnd == 100_000_000)
        try await group.shutdownGracefully()
    }
}
