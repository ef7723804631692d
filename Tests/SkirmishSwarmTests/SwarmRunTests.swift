import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishServer
@testable import SkirmishSwarm

/// Whole swarm runs against the real reference server on loopback, in-process.
@Suite(.serialized) struct SwarmRunTests {
    struct Run {
        var summary: RunSummary
        var outcome: SwarmOutcome
        var server: ServerStats
        /// Datagrams the kernel dropped for lack of receive buffer during the run (machine-wide).
        var kernelDrops: UInt64
    }

    static func run(
        _ yaml: String, bots: Int? = nil, seconds: Int, server configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> Run {
        let script = try Catalogue.builtIn.scriptLoader.parse(yaml, file: "test.yaml")
        let plan = try LoadPlan(script: script, overrides: .init(bots: bots, duration: .seconds(seconds)))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var serverConfiguration = ServerConfiguration()
        configure(&serverConfiguration)
        let server = try await ReferenceServer.start(configuration: serverConfiguration, group: group)
        let port = try #require(server.addresses.udp?.port)
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 7,
            runID: "test", loops: 2)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let dropsBefore = UDPKernelCounters.receiveBufferErrors()
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "test.yaml", startedAt: Date(), exporter: nil)
        // Wait for the last goodbyes to reach the server before comparing counts.
        let sent = summary.packets.sent
        var stats = try await server.stats()
        let deadline = ContinuousClock.now + .seconds(5)
        while stats.packetsReceived.reduce(0, +) < sent, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            stats = try await server.stats()
        }
        let kernelDrops = UDPKernelCounters.receiveBufferErrors() - dropsBefore
        await server.shutdown()
        try await group.shutdownGracefully()
        return Run(summary: summary, outcome: outcome, server: stats, kernelDrops: kernelDrops)
    }

    static let mixed = """
        name: mixed
        profile: [{ramp: {to: 200, over: 2s}}, {hold: {for: 6s}}]
        personas:
          - {name: chaser, weight: 2, game: puck, behavior: chaser, input_rate: 10hz}
          - {name: defender, weight: 1, game: puck, behavior: defender, input_rate: 10hz}
          - {name: snap, weight: 4, game: snap, seats: 3, snap_reaction: {mean: 200ms, stddev: 50ms}}
          - {name: suns, weight: 4, game: suns}
          - {name: chatter, weight: 1, game: snap, seats: 2, behavior: chatter, chat_every: 500ms..1s}
        thresholds: {desyncs: "== 0", handshake_failure_rate: "< 1%"}
        """

    @Test func twoHundredMixedBotsPlayWithoutDesyncAndTheirCountsAgreeWithTheServers() async throws {
        let run = try await Self.run(Self.mixed, seconds: 8)
        #expect(run.outcome.peakBots == 200)
        #expect(run.summary.desyncs == 0)
        #expect(run.summary.handshakes.succeeded >= 200)
        #expect(run.summary.handshakes.failureRate < 0.01, "\(run.summary.errors)")
        #expect((run.summary.matchesStarted ?? 0) > 0)
        #expect(run.summary.games["suns"]?.matchesCompleted ?? 0 > 0)
        #expect(run.summary.passed)
        // Every packet a bot sent was counted by the server, or dropped by the kernel for lack of buffer space (a
        // debug build on a loaded machine can fall behind; the kernel counts those drops) — none vanished.
        let received = run.server.packetsReceived.reduce(0, +)
        #expect(received <= run.summary.packets.sent)
        #expect(received + run.kernelDrops >= run.summary.packets.sent)
        #expect(Double(received) >= 0.9 * Double(run.summary.packets.sent))
        // Honest bots are refused almost nothing (a late ack after a goodbye, a snap call that lost a race). A
        // reliable message resent because its ack was slow (a busy machine) arrives twice and is counted as a
        // duplicate: each of those must be a resend the bots counted, and they are not refusals.
        let duplicates = run.server.rejections(.duplicate)
        #expect(
            duplicates <= run.summary.packets.resends ?? 0,
            "\(duplicates) duplicates, \(run.summary.packets.resends ?? 0) resends")
        let refused = run.server.totalRejected - duplicates - run.server.rejections(.stale)
        #expect(
            Double(refused) <= 0.01 * Double(run.summary.packets.sent),
            "\(Rejection.allCases.filter { run.server.rejections($0) > 0 }.map { "\($0) \(run.server.rejections($0))" })"
        )
        #expect(run.summary.packets.received <= run.server.packetsSent.reduce(0, +))
        #expect((run.summary.latency.rtt?.count ?? 0) > 0)
        #expect((run.summary.latency.tickLateness?.count ?? 0) > 0)
    }

    @Test func aRoguePersonaLeavesTheLegitimateFiguresClean() async throws {
        let yaml = """
            name: rogue-test
            profile: [{ramp: {to: 24, over: 1s}}, {hold: {for: 5s}}]
            personas:
              - {name: honest, weight: 2, game: puck, behavior: chaser}
              - {name: rogue, weight: 1, game: puck, behavior: rogue, rogue_rate: 100/s}
            thresholds: {desyncs: "== 0"}
            """
        let run = try await Self.run(yaml, seconds: 6)
        #expect(run.summary.desyncs == 0)
        #expect(run.summary.rogue.values.reduce(0, +) > 100)
        #expect(run.server.totalRejected > 100)
        #expect(run.summary.personas.first { $0.name == "rogue" }?.rtt?.count == 0)
        #expect(run.summary.passed)
    }

    /// Idle bots at Snap tables never sign in: the tables wait, and each bot costs its server one session and a
    /// Ping a second each way. Past the 5 s silence timeout they are all still seated, so their session timers
    /// (acks, keepalives) run although the group never sweeps its bots.
    @Test func idleBotsHoldTheirSeatsOnKeepalivesAlone() async throws {
        let yaml = """
            name: idle
            profile: [{ramp: {to: 8, over: 1s}}, {hold: {for: 7s}}]
            personas: [{name: idle, weight: 1, game: snap, seats: 4, behavior: idle}]
            """
        let run = try await Self.run(yaml, seconds: 8)
        #expect(run.summary.handshakes.succeeded == 8)
        #expect(run.summary.handshakes.failed == 0)
        #expect(run.summary.errors.isEmpty, "\(run.summary.errors)")
        // An idle bot at a Snap table counts no matches: the figure is absent, not 0.
        #expect(run.summary.matchesStarted == nil)
        #expect(
            run.server.sessionsOpened == 8,
            """
            \(run.server.sessionsOpened) sessions for 8 bots: \(run.server.challengesSent) challenges, \
            \(run.server.resumes) resumes, \(run.server.sessionsClosed) closed, rejected \(run.server.rejected), \
            received \(run.server.packetsReceived)
            """)
        let kinds = Set(run.summary.packets.sentByType.filter { $0.value > 0 }.keys)
        #expect(kinds.isSubset(of: ["Hello", "Ack", "Ping", "Pong", "Disconnect"]), "\(kinds)")
        #expect(Double(run.summary.packets.sent) < 8 * 8 * 4, "\(run.summary.packets.sentByType)")
        #expect((run.summary.replyRate ?? 0) > 0.9)
    }

    /// Bots behind an emulated link (40 ms each way, jitter) say goodbye at the run's end like any other: the
    /// goodbye the link still holds when the socket closes leaves first, so the server closes every session at once
    /// instead of holding each seat for a resume (a run of the Puck ladder left about 70 of 108 open).
    @Test func goodbyesBehindAnEmulatedLinkCloseEverySession() async throws {
        let yaml = """
            name: goodbyes
            profile: [{ramp: {to: 24, over: 1s}}, {hold: {for: 4s}}]
            personas:
              - {name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 30hz,
                 link: {latency: 40ms, jitter: 10ms}}
            """
        // A seat dropped without a goodbye would be held for two minutes: only goodbyes can close them in time.
        let run = try await Self.run(yaml, seconds: 5) { $0.resumeWindow = .seconds(120) }
        #expect(run.server.sessionsOpened >= 24)
        #expect(
            run.server.sessions == 0,
            "\(run.server.sessions) of \(run.server.sessionsOpened) sessions still open after every bot said goodbye")
        #expect(run.server.sessionsClosed == run.server.sessionsOpened)
    }

    @Test func aThresholdThatCannotHoldFailsTheRun() async throws {
        let yaml = """
            name: strict
            profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 1s}}]
            personas: [{name: chaser, weight: 1, game: puck}]
            thresholds: {matches_completed: "> 1000000", rtt_p99: "< 10s"}
            """
        let run = try await Self.run(yaml, seconds: 2)
        #expect(!run.summary.passed)
        #expect(run.summary.thresholds.first { $0.name == "matches_completed" }?.passed == false)
        #expect(run.summary.thresholds.first { $0.name == "rtt_p99" }?.passed == true)
    }
}
