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
/// none, in any game. The broken servers are the real one behind a TCP proxy that rewrites one kind of message.
@Suite(.serialized) struct ReplyCheckTests {
    /// What each swarm's checks counted: judged and failed, by check.
    struct Counts {
        var judged: [String: UInt64]
        var failed: [String: UInt64]
        var failing: Set<String> { Set(failed.filter { $0.value > 0 }.keys) }
    }

    static let puck = "[{name: chaser, game: puck, behavior: chaser}]"
    static let mixed = """
        [{name: chaser, weight: 2, game: puck, behavior: chaser}, {name: snap, weight: 3, game: snap, seats: 3,
          snap_reaction: {mean: 200ms, stddev: 50ms}}, {name: suns, weight: 2, game: suns}]
        """

    /// Runs `bots` bots of `personas` for `seconds` through a proxy applying `tamper` to the real server's messages.
    static func run(
        seconds: Int, bots: Int = 4, personas: String = puck, tamper: @escaping @Sendable (Message) -> [Message]
    ) async throws -> (Counts, changes: Int, snapshot: MetricsSnapshot) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.udp = nil
        serverConfiguration.http = nil
        let server = try await ReferenceServer.start(configuration: serverConfiguration, group: group)
        let serverAddress = try #require(server.addresses.tcp)
        let proxy = try await TamperingProxy.start(to: serverAddress, group: group, tamper: tamper)
        let script = try Catalogue.builtIn.scriptLoader.parse(
            """
            name: checks
            profile: [{ramp: {to: \(bots), over: 1s}}, {hold: {for: 5m}}]
            personas: \(personas)
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
        // Every game, with players quitting mid-match (OtherClientQuit relayed to Snap and Suns tables, ServerQuit
        // at the end).
        let (counts, changes, snapshot) = try await Self.run(seconds: 8, bots: 14, personas: Self.mixed) { [$0] }
        #expect(changes == 0)
        #expect(counts.failing.isEmpty, "failed: \(counts.failed)")
        // Every built-in check judged replies, and its failure series exists at 0 (dashboards need it).
        for check in [ReplyCheck.replyType, .welcomeTickRate, .scoreMonotonic, .replyState] {
            let name = check.name
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
        #expect(counts.failing == [ReplyCheck.welcomeTickRate.name], "failed: \(counts.failed)")
        #expect(counts.failed[ReplyCheck.welcomeTickRate.name] == counts.judged[ReplyCheck.welcomeTickRate.name])
    }

    @Test(.timeLimit(.minutes(2)))
    func aScoreThatGoesDownTripsOnlyThatCheck() async throws {
        // Every other snapshot shows the receiver one goal up, the next one back at the real score: from the first
        // snapshot on, whether or not anyone scores.
        let flip = Mutex(false)
        let (counts, changes, _) = try await Self.run(seconds: 4) { message in
            guard case .tableSnapshot(var snapshot) = message else { return [message] }
            guard
                flip.withLock({ value in
                    value.toggle()
                    return value
                })
            else { return [message] }
            snapshot.myScore += 1
            return [.tableSnapshot(snapshot)]
        }
        #expect(changes > 0)
        #expect(counts.failing == [ReplyCheck.scoreMonotonic.name], "failed: \(counts.failed)")
    }

    @Test(.timeLimit(.minutes(2)))
    func aMessageOfAnotherGameTripsOnlyTheReplyTypeCheck() async throws {
        // A Snap sign-in request slipped in beside every 30th Puck snapshot.
        let (counts, changes, _) = try await Self.run(seconds: 4) { message in
            guard case .tableSnapshot(let snapshot) = message, snapshot.tick % 30 == 0 else { return [message] }
            return [message, .signInRequest]
        }
        #expect(changes > 0)
        #expect(counts.failing == [ReplyCheck.replyType.name], "failed: \(counts.failed)")
        #expect((counts.failed[ReplyCheck.replyType.name] ?? 0) >= 1)
    }

    @Test(.timeLimit(.minutes(2)))
    func aCardTurnedBeforeTheDealTripsOnlyTheReplyStateCheck() async throws {
        // A card turned announced before every deal: the right type for Snap, in the wrong state.
        let card = try #require(Card(suit: 0, rank: 1))
        let (counts, changes, _) = try await Self.run(
            seconds: 4, bots: 3, personas: "[{name: snap, game: snap, seats: 3}]"
        ) { message in
            guard case .dealCards = message else { return [message] }
            return [.cardTurned(CardTurned(peer: 1, card: card, stateHash: 0)), message]
        }
        #expect(changes > 0)
        #expect(counts.failing == [ReplyCheck.replyState.name], "failed: \(counts.failed)")
    }
}
