import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Synchronization
import Testing

@testable import SkirmishScript
@testable import SkirmishServer
@testable import SkirmishSwarm

/// Checks on every reply: a server that breaks exactly one rule trips exactly that check, and the real server trips
/// none. The broken servers are the real one behind a TCP proxy that rewrites one kind of message.
@Suite(.serialized) struct ReplyCheckTests {
    /// What each swarm's checks counted: judged and failed, by check.
    struct Counts {
        var judged: [String: UInt64]
        var failed: [String: UInt64]
        var failing: Set<String> { Set(failed.filter { $0.value > 0 }.keys) }
    }

    /// Runs four Puck chasers for `seconds` through a proxy applying `tamper` to the real server's messages.
    static func run(
        seconds: Int, tamper: @escaping @Sendable (Message) -> [Message]
    ) async throws -> (Counts, changes: Int, snapshot: MetricsSnapshot) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.udp = nil
        serverConfiguration.http = nil
        let server = try await ReferenceServer.start(configuration: serverConfiguration, group: group)
        let serverAddress = try #require(server.addresses.tcp)
        let proxy = try await TamperingProxy.start(to: serverAddress, group: group, tamper: tamper)
        let script = try ScriptLoader().parse(
            """
            name: checks
            profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 5m}}]
            personas: [{name: chaser, game: puck, behavior: chaser}]
            """, file: "checks.yaml")
        let plan = try LoadPlan(script: script, overrides: .init(duration: .seconds(seconds)))
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .tcp, host: "127.0.0.1", port: proxy.port), seed: 5,
            runID: "checks", loops: 1)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let outcome = await swarm.run()
        await proxy.close()
        await server.shutdown()
        try await group.shutdownGracefully()
        let snapshot = outcome.snapshot
        return (
            Counts(
                judged: snapshot.counterBreakdown(SkirmishMetrics.checks, by: "check"),
                failed: snapshot.counterBreakdown(SkirmishMetrics.checksFailed, by: "check")),
            proxy.changes, snapshot
        )
    }

    @Test(.timeLimit(.minutes(2)))
    func theRealServerBreaksNoRule() async throws {
        let (counts, changes, snapshot) = try await Self.run(seconds: 6) { [$0] }
        #expect(changes == 0)
        #expect(counts.failing.isEmpty, "failed: \(counts.failed)")
        // Every built-in Puck check judged replies, and its failure series exists at 0 (dashboards need it).
        for name in [ReplyCheck.replyType, ReplyCheck.welcomeTickRate, ReplyCheck.scoreMonotonic] {
            #expect((counts.judged[name] ?? 0) > 0, "\(name) judged nothing")
            #expect(!snapshot.series(of: SkirmishMetrics.checksFailed, where: ["check": name]).isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aWelcomeWithTheWrongTickRateTripsOnlyThatCheck() async throws {
        let (counts, changes, _) = try await Self.run(seconds: 4) { message in
            guard case .welcome(var welcome) = message else { return [message] }
            welcome.tickRate = 30
            return [.welcome(welcome)]
        }
        #expect(changes >= 4)
        #expect(counts.failing == [ReplyCheck.welcomeTickRate], "failed: \(counts.failed)")
        #expect(counts.failed[ReplyCheck.welcomeTickRate] == counts.judged[ReplyCheck.welcomeTickRate])
    }

    @Test(.timeLimit(.minutes(2)))
    func aScoreThatGoesDownTripsOnlyThatCheck() async throws {
        // Every other snapshot after the first goal shows one goal fewer for the receiver.
        let flip = Mutex(false)
        let (counts, changes, _) = try await Self.run(seconds: 10) { message in
            guard case .tableSnapshot(var snapshot) = message, snapshot.myScore > 0 else { return [message] }
            guard
                flip.withLock({ value in
                    value.toggle()
                    return value
                })
            else { return [message] }
            snapshot.myScore -= 1
            return [.tableSnapshot(snapshot)]
        }
        #expect(changes > 0, "no goal was scored in 10 s, so the score never moved")
        #expect(counts.failing == [ReplyCheck.scoreMonotonic], "failed: \(counts.failed)")
    }

    @Test(.timeLimit(.minutes(2)))
    func aMessageOfAnotherGameTripsOnlyTheReplyTypeCheck() async throws {
        // A Snap sign-in request slipped in beside each Puck goal.
        let (counts, changes, _) = try await Self.run(seconds: 10) { message in
            guard case .goalScored = message else { return [message] }
            return [message, .signInRequest]
        }
        #expect(changes > 0, "no goal was scored in 10 s")
        #expect(counts.failing == [ReplyCheck.replyType], "failed: \(counts.failed)")
        #expect((counts.failed[ReplyCheck.replyType] ?? 0) >= 1)
    }
}
