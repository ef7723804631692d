import Foundation
import NIOCore
import NIOPosix
import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire
import Testing

/// A fourth game, "Count", added the way a user's package would add one: its rules and behaviour written here against
/// the public API alone (no `@testable`, no `package` access), registered with the server and the swarm, and played
/// through the real reference server on loopback by a swarm.
@Suite(.serialized) struct GamePluginTests {
    /// The server's games: the catalogue's, where the fourth game was registered once.
    static func games() throws -> GameRegistry { try catalogue(tally: CountTally()).games }

    /// The built-in catalogue with the fourth game — its rules and its player — registered once, for the server, the
    /// scripts and the swarm alike.
    static func catalogue(tally: CountTally) throws -> Catalogue {
        var catalogue = Catalogue.builtIn
        try catalogue.register(game: CountRules.self) { _ in CountRules() }
        catalogue.register(behavior: "counter", games: [CountRules.game.kind]) { _ in CountPlayer(tally: tally) }
        return catalogue
    }

    static func loader(games: GameRegistry) throws -> ScriptLoader {
        try catalogue(tally: CountTally()).scriptLoader
    }

    // MARK: The rules alone

    @Test func theRulesPlayTurnsRefuseWhatIsOutOfTurnAndEndAtTwentyOne() throws {
        var rules = CountRules()
        var out = MatchOutputs()
        let t0 = Instant(seconds: 100)
        rules.seatFilled(0, peer: 7, now: t0, into: &out)
        #expect(out.messages.isEmpty && out.notices.isEmpty)
        rules.seatFilled(1, peer: 8, now: t0, into: &out)
        #expect(out.notices == [.started])
        #expect(out.messages.map(\.seat) == [0, 1])
        #expect(out.messages.allSatisfy { $0.message == CountMessage.state(total: 0, turn: 0).message })
        out = MatchOutputs()

        #expect(rules.receive(CountMessage.add(2).message, from: 1, now: t0, into: &out) == .outOfTurn)
        #expect(rules.receive(CountMessage.add(4).message, from: 0, now: t0, into: &out) == .badValue)
        #expect(rules.receive(.chat(Chat(text: "hi")), from: 0, now: t0, into: &out) == .outOfState)
        #expect(out.messages.isEmpty, "a refused message changes nothing")

        var total = 0
        var seat = 0
        while !rules.isOver {
            let amount = min(3, CountRules.goal - total)
            #expect(rules.receive(CountMessage.add(amount).message, from: seat, now: t0, into: &out) == .accepted)
            total += amount
            seat = 1 - seat
        }
        #expect(total == 21)
        #expect(out.notices == [.completed])
        let last = out.messages.suffix(2)
        #expect(last.map(\.seat) == [0, 1])
        #expect(last.allSatisfy { $0.message == CountMessage.over(winner: 1 - seat, total: 21).message })
        #expect(rules.receive(CountMessage.add(1).message, from: seat, now: t0, into: &out) == .outOfState)
    }

    @Test func theTurnClockPlaysOneForAPlayerWhoWaitsTooLong() {
        var rules = CountRules()
        var out = MatchOutputs()
        let t0 = Instant(seconds: 100)
        rules.seatFilled(0, peer: 1, now: t0, into: &out)
        rules.seatFilled(1, peer: 2, now: t0, into: &out)
        out = MatchOutputs()
        // The clock starts on the first tick after the turn was announced, and runs on the time it is given.
        rules.tick(now: t0 + .seconds(1), into: &out)
        rules.tick(now: t0 + .seconds(2), into: &out)
        #expect(out.messages.isEmpty)
        rules.tick(now: t0 + .seconds(3), into: &out)
        #expect(
            out.messages.map(\.message) == Array(repeating: CountMessage.state(total: 1, turn: 1).message, count: 2))
    }

    @Test func aPlayerWhoLeavesForfeitsToTheOther() {
        var rules = CountRules()
        var out = MatchOutputs()
        rules.seatFilled(0, peer: 1, now: .zero, into: &out)
        rules.seatFilled(1, peer: 2, now: .zero, into: &out)
        out = MatchOutputs()
        rules.seatLeft(0, now: Instant(seconds: 1), into: &out)
        #expect(rules.isOver)
        #expect(out.notices == [.forfeited(seat: 0)])
        #expect(out.messages == [MatchOutput(seat: 1, CountMessage.over(winner: 1, total: 0).message)])
    }

    // MARK: Registration

    @Test func theRegistryHoldsTheFourthGameBesideTheBuiltInOnesAndRefusesClashes() throws {
        var games = try Self.games()
        #expect(games.games.map(\.name) == ["snap", "puck", "suns", "count"])
        #expect(games[GameKind(rawValue: 4)]?.name == "count")
        #expect(games["count"]?.seats == 2...2)
        #expect(games[GameKind(rawValue: 5)] == nil)

        struct Clash: GameRules {
            static let game = GameDescription(kind: .puck, name: "other-puck", seats: 2...2)
            var isOver: Bool { false }
            mutating func seatFilled(_ seat: Int, peer: UInt32, now: Instant, into out: inout MatchOutputs) {}
            mutating func seatLeft(_ seat: Int, now: Instant, into out: inout MatchOutputs) {}
            mutating func receive(_ message: Message, from seat: Int, now: Instant, into out: inout MatchOutputs)
                -> MatchVerdict
            { .outOfState }
        }
        let taken = try #require(throws: GameRegistryError.self) { try games.register(Clash.self) { _ in Clash() } }
        #expect(taken.description.contains("wire number 2 of game `other-puck` is taken by `puck`"), "\(taken)")
        #expect(taken.description.contains("5 is free"), "\(taken)")
        let twice = try #require(throws: GameRegistryError.self) {
            try games.register(CountRules.self) { _ in CountRules() }
        }
        #expect(twice.description.contains("taken by `count`"), "\(twice)")
    }

    @Test func scriptsNameTheGameAndItsBehaviourAndAnUnknownGameListsTheKnownOnes() throws {
        let games = try Self.games()
        let script = try Self.loader(games: games).parse(
            "name: counting\npersonas: [{name: c, game: count, behavior: counter}]\n", file: "count.yaml")
        let persona = try #require(script.personas.first)
        #expect(persona.game == CountRules.game.kind)
        #expect(persona.gameName == "count")
        #expect(persona.seats == 2)

        let inferred = try Self.loader(games: games).parse(
            "name: inferred\npersonas: [{name: c, behavior: counter}]\n", file: "inferred.yaml")
        #expect(inferred.personas.first?.gameName == "count")

        let typo = try #require(throws: ScriptError.self) {
            try Self.loader(games: games).parse(
                "name: typo\npersonas: [{name: c, game: cuont, behavior: counter}]\n", file: "typo.yaml")
        }
        #expect(typo.message == "unknown game `cuont`", "\(typo)")
        #expect(typo.hint?.contains("did you mean `count`?") == true, "\(typo)")
        #expect(typo.hint?.contains("snap, puck, suns, count") == true, "\(typo)")

        // Without the registration, a script cannot name the game.
        #expect(throws: ScriptError.self) {
            try Catalogue.builtIn.scriptLoader.parse(
                "name: x\npersonas: [{name: c, game: count, behavior: idle}]\n", file: "x.yaml")
        }
        // A game without a built-in behaviour needs one named.
        let bare = try #require(throws: ScriptError.self) {
            try Self.loader(games: games).parse("name: x\npersonas: [{name: c, game: count}]\n", file: "x.yaml")
        }
        #expect(bare.message.contains("has no built-in behaviour"), "\(bare)")
    }

    // MARK: Through the real server and a swarm

    /// Eight counters for six seconds: each match is a few round trips on loopback, so every bot plays many.
    static let script = """
        name: count-test
        profile: [{ramp: {to: 8, over: 1s}}, {hold: {for: 5s}}]
        personas:
          - {name: counter, weight: 1, game: count, behavior: counter}
        thresholds: {checks_failed: "== 0"}
        """

    @Test func aSwarmPlaysTheFourthGameThroughTheRealServer() async throws {
        let games = try Self.games()
        let tally = CountTally()
        let script = try Self.loader(games: games).parse(Self.script, file: "count.yaml")
        let plan = try LoadPlan(script: script)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.games = games
        let server = try await ReferenceServer.start(configuration: serverConfiguration, group: group)
        let port = try #require(server.addresses.udp?.port)
        var configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 21,
            runID: "count-test", loops: 1)
        configuration.catalogue = try Self.catalogue(tally: tally)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "count.yaml", startedAt: Date(), exporter: nil)
        let serverMetrics = try await server.metricsSnapshot()
        await server.shutdown()
        try await group.shutdownGracefully()

        // The server counted the game under its registered name, and refused nothing as an unknown game.
        let count = ["game": "count"]
        let started = serverMetrics.counterTotal(SkirmishMetrics.serverMatchesStarted, where: count)
        let completed = serverMetrics.counterTotal(SkirmishMetrics.serverMatchesCompleted, where: count)
        #expect(started >= 4, "server started \(started) count matches")
        #expect(completed >= 4, "server completed \(completed) count matches")
        #expect(completed <= started)
        #expect(serverMetrics.counterTotal(SkirmishMetrics.serverMatchesStarted, where: ["game": "puck"]) == 0)
        #expect(
            serverMetrics.counterTotal(SkirmishMetrics.serverRejectedPackets, where: ["reason": "unknown_game"]) == 0)
        #expect(serverMetrics.counterTotal(SkirmishMetrics.serverPacketsReceived, where: ["type": "GameReliable"]) > 0)

        // Each completed match was seen to its end by both players, who agreed on the result.
        let won = tally[.won]
        let lost = tally[.lost]
        #expect(won >= Int(completed) - 8 && won > 0, "\(won) won of \(completed) completed")
        #expect(lost <= won && won - lost <= 8, "won \(won), lost \(lost)")
        #expect(tally[.moves] >= 4 * won)

        // The swarm measured it as a game of its own: matches, checks and no errors.
        #expect(outcome.snapshot.counterTotal(SkirmishMetrics.matchesCompleted, where: count) >= UInt64(won + lost))
        #expect(outcome.snapshot.counterTotal(SkirmishMetrics.checks, where: ["check": "count_step"]) > 0)
        #expect(outcome.snapshot.counterTotal(SkirmishMetrics.checksFailed, where: count) == 0)
        #expect(summary.personas.first?.game == "count")
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        // The counter keeps no replica: its desyncs are not measured (absent), never a 0 nobody counted.
        #expect(summary.desyncs == nil)
        #expect(summary.handshakes.failed == 0)
        #expect(summary.passed)
    }

    @Test func aServerWithoutTheGameRefusesItAndCountsTheRefusal() async throws {
        let games = try Self.games()
        let script = try Self.loader(games: games).parse(
            """
            name: count-refused
            profile: [{ramp: {to: 2, over: 1s}}, {hold: {for: 2s}}]
            personas:
              - {name: counter, weight: 1, game: count, behavior: counter}
            """, file: "count.yaml")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The server plays only the built-in games.
        let server = try await ReferenceServer.start(configuration: ServerConfiguration(), group: group)
        let port = try #require(server.addresses.udp?.port)
        var configuration = SwarmConfiguration(
            script: script, plan: try LoadPlan(script: script),
            target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 22, runID: "count-refused", loops: 1)
        configuration.catalogue = try Self.catalogue(tally: CountTally())
        let swarm = try await Swarm(configuration: configuration, group: group)
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "count.yaml", startedAt: Date(), exporter: nil)
        let metrics = try await server.metricsSnapshot()
        await server.shutdown()
        try await group.shutdownGracefully()

        // Every Hello was refused as an unknown game and counted; no bot was seated, no game's counters moved.
        let refused = metrics.counterTotal(SkirmishMetrics.serverRejectedPackets, where: ["reason": "unknown_game"])
        #expect(refused >= 2, "the server refused \(refused) Hellos as an unknown game")
        #expect(summary.handshakes.failed >= 2, "\(summary.handshakes)")
        #expect(summary.handshakes.succeeded == 0, "\(summary.handshakes)")
        #expect(metrics.counterTotal(SkirmishMetrics.serverMatchesStarted) == 0)
    }
}
