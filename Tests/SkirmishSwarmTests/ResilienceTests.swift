import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishTelemetry
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishServer
@testable import SkirmishSwarm

/// Faults a soak must survive, against the real reference server on loopback: a restart mid-run, a storm of
/// reconnects, hostile traffic beside honest players.
@Suite(.serialized) struct ResilienceTests {
    static func udpOnly(port: Int = 0) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.udp = .init(host: "127.0.0.1", port: port)
        configuration.tcp = nil
        configuration.http = nil
        return configuration
    }

    static func configuration(_ yaml: String, port: Int, seconds: Int, bots: Int? = nil) throws -> SwarmConfiguration {
        let script = try Catalogue.builtIn.scriptLoader.parse(yaml, file: "test.yaml")
        let plan = try LoadPlan(script: script, overrides: .init(bots: bots, duration: .seconds(seconds)))
        return SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 11,
            runID: "resilience", loops: 2)
    }

    /// Polls the swarm's merged metrics every 100 ms until `condition` holds or `limit` passes.
    static func waitFor(
        _ swarm: Swarm, limit: Duration, _ condition: (MetricsSnapshot) -> Bool
    ) async throws -> MetricsSnapshot {
        let deadline = ContinuousClock.now + limit
        var snapshot = await swarm.snapshot()
        while !condition(snapshot), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            snapshot = await swarm.snapshot()
        }
        return snapshot
    }

    @Test(.timeLimit(.minutes(2)))
    func botsComeBackSpreadOutWhenTheServerRestartsOnTheSamePort() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // A port the kernel never hands out for port 0: while the server is down, no other test's socket takes it
        // (on a host whose ephemeral range leaves no such port, any free one).
        let reserved = LoopbackPort.belowEphemeralRange() ?? 0
        let first = try await ReferenceServer.start(configuration: Self.udpOnly(port: reserved), group: serverGroup)
        let port = try #require(first.addresses.udp?.port)
        let configuration = try Self.configuration(
            """
            name: restart
            profile: [{ramp: {to: 64, over: 1s}}, {hold: {for: 5m}}]
            personas:
              - {name: chaser, weight: 3, game: puck, behavior: chaser, input_rate: 20hz}
              - {name: snap, weight: 1, game: snap, seats: 2, snap_reaction: {mean: 300ms, stddev: 50ms}}
            """, port: port, seconds: 300)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let run = Task { await swarm.run() }

        // Every bot has a seat before the server goes away.
        let before = try await Self.waitFor(swarm, limit: .seconds(30)) {
            $0.counterTotal(SkirmishMetrics.handshakes, where: ["outcome": "ok"]) >= 64
        }
        #expect(before.counterTotal(SkirmishMetrics.handshakes, where: ["outcome": "ok"]) >= 64)
        let outage = ContinuousClock.now
        await first.shutdown()
        // Down for a second, as a restart is; then the same port again.
        try await Task.sleep(for: .seconds(1))
        let second = try await ReferenceServer.start(configuration: Self.udpOnly(port: port), group: serverGroup)
        // How long the server was really gone: a busy machine stops and starts it slower than the second above.
        let down = (ContinuousClock.now - outage).seconds
        #expect(second.addresses.udp?.port == port)

        let lost = { (snapshot: MetricsSnapshot) -> UInt64 in
            let errors = snapshot.counterBreakdown(SkirmishMetrics.errors, by: "kind")
            return (errors["server_quit"] ?? 0) + (errors["disconnected_serverShutdown"] ?? 0)
        }
        let after = try await Self.waitFor(swarm, limit: .seconds(45)) { snapshot in
            let outages = lost(snapshot)
            return outages > 0 && snapshot.counterTotal(SkirmishMetrics.reconnects) >= outages
        }
        // The run goes on against the new server: matches start there.
        let deadline = ContinuousClock.now + .seconds(30)
        var stats = try await second.stats()
        while stats.totalMatchesStarted == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            stats = try await second.stats()
        }
        run.cancel()
        let outcome = await run.value
        await second.shutdown()
        try await group.shutdownGracefully()
        try await serverGroup.shutdownGracefully()

        let outages = lost(after)
        #expect(outages >= 48, "bots in a match when the server went away: \(outages)")
        #expect(after.counterTotal(SkirmishMetrics.reconnects) >= outages)
        #expect(stats.totalMatchesStarted > 0)
        #expect(stats.sessionsOpened >= outages)
        #expect(outcome.snapshot.counterTotal(SkirmishMetrics.desyncs) == 0)
        // Reconnect time is measured, and the crowd came back spread out, not in one synchronised burst: the
        // middle half of the bots took at least 100 ms to get back in, and nobody came back while it was down.
        let times = try #require(after.histogram(SkirmishMetrics.reconnect))
        let q25 = try #require(times.quantile(0.25))
        let q75 = try #require(times.quantile(0.75))
        #expect(q75 - q25 >= 0.1, "reconnect p25 \(q25) s, p75 \(q75) s")
        #expect(try #require(times.quantile(0)) >= 0.5)
        // And every bot was back within 15 s of the server's return (the backoff's waits stay short while the outage
        // is short), however long a busy machine took to bring it back.
        #expect(try #require(times.quantile(1)) < down + 15, "server down for \(down) s")
    }

    /// Scaled for CI (120 bots in a debug build); `SKIRMISH_STORM_BOTS=2000` runs the script's own size, and the
    /// thousands-of-bots figures come from `skirmish swarm bots/reconnect-storm.yaml` in release mode. Latency is
    /// judged only when the generator kept its schedule (tick lateness p99 under 5 ms): past that the figures
    /// describe the generator, not the server.
    @Test(.timeLimit(.minutes(2)))
    func aReconnectStormLeavesSteadyPlayersWithinTheirBudget() async throws {
        let bots = ProcessInfo.processInfo.environment["SKIRMISH_STORM_BOTS"].flatMap { Int($0) } ?? 120
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReferenceServer.start(configuration: Self.udpOnly(), group: serverGroup)
        let port = try #require(server.addresses.udp?.port)
        // Reconnectors connect within 2 s and all drop 3–3.5 s after their seat: the drops and resumes bunch up.
        let configuration = try Self.configuration(
            """
            name: storm
            profile: [{ramp: {to: \(bots), over: 2s}}, {hold: {for: 14s}}]
            personas:
              - {name: reconnector, weight: 3, game: puck, behavior: reconnector, input_rate: 10hz,
                 reconnect_every: 3s..3500ms, offline_for: 1s..1200ms}
              - {name: steady, weight: 1, game: puck, behavior: chaser, input_rate: 10hz}
            thresholds: {desyncs: "== 0", reconnect_p99: "< 2s"}
            """, port: port, seconds: 16)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "storm.yaml", startedAt: Date(), exporter: nil)
        let stats = try await server.stats()
        await server.shutdown()
        try await group.shutdownGracefully()
        try await serverGroup.shutdownGracefully()

        let reconnectors = bots * 3 / 4
        #expect(summary.reconnects > 0, "\(summary.errors)")
        #expect(stats.resumes >= summary.reconnects * 9 / 10)
        // The steady players kept being served while the storm raged: no desync, pings answered.
        let steady = try #require(summary.personas.first { $0.name == "steady" })
        #expect(steady.desyncs == 0)
        #expect((steady.rtt?.count ?? 0) >= UInt64(bots / 4) * 3)
        #expect(summary.desyncs == 0, "\(summary.games)")
        // A reconnector's inputs fall due while it is offline, so its own lateness says nothing about the generator;
        // the steady players' does.
        if let lateness = steady.tickLatenessP99, lateness > 0.005 {
            print("aReconnectStorm: latency not judged — the generator ran \(Int(lateness * 1_000)) ms late (p99)")
        } else {
            #expect(summary.reconnects >= UInt64(reconnectors), "\(summary.errors)")
            #expect(try #require(steady.rtt?.p99) < 0.100, "steady rtt p99 \(steady.rtt?.p99 ?? 0) s")
            #expect(try #require(summary.latency.reconnect?.p99) < 2)
            #expect(try #require(summary.replyRate) > 0.95)
        }
    }

    /// The `rogue` script (its honest personas and its rogue) against the reference server: the honest players
    /// finish their matches with no desync within their budget, and the server counts every hostile packet under a
    /// reason while its tables stay bounded.
    @Test(.timeLimit(.minutes(2)))
    func rogueTrafficIsCountedByReasonWhileHonestMatchesComplete() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ReferenceServer.start(configuration: Self.udpOnly(), group: serverGroup)
        let port = try #require(server.addresses.udp?.port)
        let script = try Catalogue.builtIn.scriptLoader.load(
            path: SkirmishProcess.repositoryRoot.appendingPathComponent("bots/rogue.yaml").path)
        let plan = try LoadPlan(script: script, overrides: .init(bots: 48, duration: .seconds(40)))
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 5,
            runID: "rogue", loops: 2)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let memoryBefore = ProcessResources.current().residentBytes ?? 0
        let dropsBefore = UDPKernelCounters.receiveBufferErrors()
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "bots/rogue.yaml", startedAt: Date(),
            exporter: nil)
        let stats = try await server.stats()
        let kernelDrops = UDPKernelCounters.receiveBufferErrors() - dropsBefore
        let memoryAfter = ProcessResources.current().residentBytes ?? 0
        await server.shutdown()
        try await group.shutdownGracefully()
        try await serverGroup.shutdownGracefully()

        #expect(summary.desyncs == 0)
        #expect((summary.matchesCompleted ?? 0) > 0)
        #expect(summary.games["snap"]?.matchesStarted ?? 0 > 0)
        if let warning = summary.generatorWarning {
            print("rogueTraffic: latency not judged — \(warning)")
        } else {
            #expect(try #require(summary.latency.rtt?.p99) < 0.100, "honest rtt p99 (the script's budget)")
        }
        // Each malformed kind lands under its own reason.
        let rogue = summary.rogue
        let expected: [(kind: String, reason: Rejection)] = [
            ("garbage", .trailingBytes), ("bad_magic", .badMagic), ("truncated", .truncatedPayload),
            ("oversized", .tooLarge), ("nan", .badValue), ("wrong_direction", .wrongDirection),
            ("out_of_state", .outOfState),
        ]
        var malformed: UInt64 = 0
        var counted: UInt64 = stats.rejections(.rateLimited)
        for (kind, reason) in expected {
            let sent = rogue[kind] ?? 0
            #expect(sent > 0, "no \(kind) packet sent")
            #expect(stats.rejections(reason) > 0, "nothing counted as \(reason.label)")
            malformed += sent
            counted += stats.rejections(reason)
        }
        // Every malformed packet is counted, under its reason or — once the sender floods — as rate limited; only
        // what the kernel dropped for lack of buffer (counted machine-wide) may be missing.
        #expect(counted + kernelDrops >= malformed, "counted \(counted) of \(malformed), kernel drops \(kernelDrops)")
        #expect(stats.rejections(.rateLimited) > 0, "the flood was not rate limited")
        // Bounded: no session or match table grows past what the honest players need.
        // Sessions: the honest bots' own, plus seats held 15 s for a resume; the flood adds none.
        #expect(stats.sessions <= 3 * 48)
        #expect(stats.detached <= 3 * 48)
        #expect(memoryAfter < memoryBefore + 256 << 20)
    }
}
