import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishServer

/// The server plays the games of its registry: any wire number it holds is seated, ticked and counted by name, and
/// any other is a counted, answered refusal.
@Suite struct GameRegistryTests {
    typealias Harness = ServerCoreTests.Harness

    /// A two-seat game under wire number 200 that ends on its first tick after both seats are filled.
    struct Blink: GameRules {
        static let game = GameDescription(kind: GameKind(rawValue: 200), name: "blink", seats: 2...2, tickRate: 30)
        var present = [false, false]
        var started = false
        var ticks = 0
        private(set) var isOver = false

        mutating func seatFilled(_ seat: Int, peer: UInt32, now: Instant, into out: inout MatchOutputs) {
            present[seat] = true
            guard !present.contains(false) else { return }
            started = true
            out.report(.started)
        }

        mutating func seatLeft(_ seat: Int, now: Instant, into out: inout MatchOutputs) { isOver = true }

        mutating func receive(_ message: Message, from seat: Int, now: Instant, into out: inout MatchOutputs)
            -> MatchVerdict
        { .outOfState }

        mutating func tick(now: Instant, into out: inout MatchOutputs) {
            guard started, !isOver else { return }
            ticks += 1
            guard ticks == 3 else { return }
            isOver = true
            for seat in 0..<2 { out.send(.game(GamePayload(bytes: [UInt8(ticks)])), to: seat) }
            out.report(.completed)
            out.report(.compared(agreed: false))
        }
    }

    /// A registry of the built-in games plus ``Blink``.
    static func harness() throws -> Harness {
        var configuration = ServerConfiguration()
        try configuration.games.register(Blink.self) { _ in Blink() }
        var harness = Harness()
        harness.core = ServerCore(configuration: configuration)
        return harness
    }

    @Test func aHelloForAGameTheRegistryLacksIsRefusedNamingTheGamesItHas() throws {
        var harness = Harness()
        let address = try ServerCoreTests.address(50_000)
        let unknown = GameKind(rawValue: 9)
        harness.send(Packet(.hello(ServerCoreTests.hello(game: unknown, seats: 2))), from: address)
        guard case .challenge(let challenge) = try #require(harness.drain().first).packet.message else {
            Issue.record("expected a challenge")
            return
        }
        let hello = Packet(.hello(ServerCoreTests.hello(game: unknown, seats: 2, cookie: challenge.cookie)))
        harness.send(hello, from: address)
        let replies = harness.drain()
        #expect(replies.count == 1)
        guard case .reject(let reject) = try #require(replies.first).packet.message else {
            Issue.record("expected a Reject, got \(replies)")
            return
        }
        #expect(reject.reason == .badRequest)
        #expect(reject.text == "game 9 unknown; plays snap=1 puck=2 suns=3")
        #expect(harness.core.stats.rejections(.unknownGame) == 1)
        #expect(harness.core.stats.sessions == 0)
        #expect(harness.core.stats.games.isEmpty)
        let metrics = ServerMetrics.snapshot(harness.core.stats)
        #expect(metrics.counterTotal(SkirmishMetrics.serverRejectedPackets, where: ["reason": "unknown_game"]) == 1)
    }

    @Test func aRefusalListsAsManyGamesAsFitTheWire() throws {
        var games = GameRegistry.builtIn
        try games.register(Blink.self) { _ in Blink() }
        #expect(games.refusal(for: GameKind(rawValue: 77)) == "game 77 unknown; plays snap=1 puck=2 suns=3 blink=200")
        struct Long: GameRules {
            static let game = GameDescription(
                kind: GameKind(rawValue: 201), name: String(repeating: "l", count: 32), seats: 2...2)
            var isOver: Bool { true }
            mutating func seatFilled(_ seat: Int, peer: UInt32, now: Instant, into out: inout MatchOutputs) {}
            mutating func seatLeft(_ seat: Int, now: Instant, into out: inout MatchOutputs) {}
            mutating func receive(_ message: Message, from seat: Int, now: Instant, into out: inout MatchOutputs)
                -> MatchVerdict
            { .outOfState }
        }
        try games.register(Long.self) { _ in Long() }
        let text = games.refusal(for: GameKind(rawValue: 255))
        #expect(text.utf8.count <= WireLimits.maxRejectText)
        #expect(text == "game 255 unknown; plays snap=1 puck=2 suns=3 blink=200 …")
    }

    @Test func gameNumberTwoHundredIsSeatedTickedAndCountedByName() throws {
        var harness = try Self.harness()
        let first = try harness.join(try ServerCoreTests.address(51_000), game: Blink.game.kind)
        let second = try harness.join(try ServerCoreTests.address(51_001), game: Blink.game.kind)
        #expect(first.match == second.match)
        #expect(first.tickRate == 30)
        #expect(harness.core.stats.matchesStarted(Blink.game.kind) == 1)
        // 30 Hz: every second server tick, so three game ticks take six server ticks.
        harness.advance(.nanoseconds(1_000_000_000 / 60 * 7), step: .nanoseconds(1_000_000_000 / 60))
        let payloads = harness.drain().filter { $0.packet.message.type == .gameReliable }
        #expect(payloads.count == 2)
        #expect(payloads.allSatisfy { $0.packet.message == .game(GamePayload(bytes: [3])) })
        #expect(harness.core.stats.matchesCompleted(Blink.game.kind) == 1)
        #expect(harness.core.stats.desyncs(Blink.game.kind) == 1)

        let metrics = ServerMetrics.snapshot(harness.core.stats, games: harness.core.configuration.games)
        let blink = ["game": "blink"]
        #expect(metrics.counterTotal(SkirmishMetrics.serverMatchesStarted, where: blink) == 1)
        #expect(metrics.counterTotal(SkirmishMetrics.serverMatchesCompleted, where: blink) == 1)
        #expect(metrics.counterTotal(SkirmishMetrics.serverDesyncs, where: blink) == 1)
        #expect(metrics.counterTotal(SkirmishMetrics.serverMatchesStarted, where: ["game": "puck"]) == 0)
    }

    /// `WireProtocol.md`, "Game numbers": 0 is no game, 1–3 are the built-in games, 4–255 are left to a server's own.
    @Test func zeroIsNoGameOneToThreeAreBuiltInAndTheRestAreFreeForAServersOwn() throws {
        #expect(GameKind.builtIn.map(\.rawValue) == [1, 2, 3])
        #expect(GameRegistry.builtIn.games.map(\.kind.rawValue) == [1, 2, 3])
        func own(_ number: UInt8) -> GameDescription {
            GameDescription(kind: GameKind(rawValue: number), name: "own", seats: 2...2)
        }
        #expect(own(0).problem?.contains("pick 4…255") == true)
        #expect(
            (4...255).allSatisfy { own(UInt8($0)).problem == nil && GameRegistry.builtIn[own(UInt8($0)).kind] == nil })
    }

    @Test func aTableOutsideTheGamesSeatsIsRefused() throws {
        var harness = try Self.harness()
        #expect(throws: (any Error).self) {
            try harness.join(try ServerCoreTests.address(52_000), game: Blink.game.kind, seats: 3)
        }
        #expect(harness.core.stats.rejections(.badRequest) == 1)
        #expect(harness.core.stats.rejections(.unknownGame) == 0)
    }
}
