import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishSwarm

/// The Snap behaviour driven by hand against a table the test deals: the server's side is a ``SnapGame`` whose moves
/// become the messages a server sends (with its state hashes), and what the bot sends is read from its outbox.
@Suite struct SnapPlayerTests {
    /// Seats 0 and 1 are other players; the bot sits at seat 2 holding one card, a five. Seat 0 turns a
    /// two, seat 1 a five, the bot its five: a pair shows.
    private static let me: UInt32 = 12
    private static let peers: [UInt32] = [10, 11, me]

    private static func card(_ suit: Int, _ rank: Int) -> Card { Card(suit: suit, rank: rank)! }

    private static var hands: [[Card]] {
        let placed = [card(0, 1), card(0, 7), card(1, 4), card(1, 7), card(2, 4)]
        let rest = (0..<52).compactMap { Card(rawValue: UInt8($0)) }.filter { !placed.contains($0) }
        return [
            [card(0, 1), card(0, 7)] + rest.prefix(23), [card(1, 4), card(1, 7)] + rest.dropFirst(23), [card(2, 4)],
        ]
    }

    /// A player whose cards are all gone watches: a pair that shows after it is out gets no call from it, so its
    /// server never has to refuse one (it did: `out_of_state` on a clean quickstart run).
    @Test func aPlayerWithoutCardsCallsNoSnap() {
        var table = Table()
        table.turn(by: 0)
        table.turn(by: 1)
        table.turn(by: 2)
        #expect(table.server.hasPair)
        #expect(table.harness.agent.nextWake != nil, "holding a card, it plans a call on the pair")
        // Seat 0 calls first and takes every pile: the bot's only card goes with them.
        table.call(by: 0, outcome: .right)
        #expect(!table.server.isIn(2))
        // The next pair (a seven from seat 0, one from seat 1) is for the others.
        table.turn(by: 0)
        table.turn(by: 1)
        #expect(table.server.hasPair)
        table.harness.wakeAll(until: table.now + .seconds(30))
        #expect(table.harness.sentSnaps == 0)
        #expect(table.harness.desyncs == 0, "the replica followed the table")
    }

    /// The control: while it holds cards the same bot does call the pair, after its reaction time.
    @Test func aPlayerHoldingCardsCallsThePair() throws {
        var table = Table()
        table.turn(by: 0)
        table.turn(by: 1)
        table.turn(by: 2)
        table.harness.wakeAll(until: table.now + .seconds(30))
        #expect(table.harness.sentSnaps == 1)
        #expect(try table.server.callSnap(by: 2) == .right, "the call it made is right on the server's table")
    }

    /// The server's table and the bot's view of it, moved together.
    private struct Table {
        var server: SnapGame
        var harness = Harness()
        var now: Instant { harness.now }

        init() {
            server = try! SnapGame(hands: SnapPlayerTests.hands)
            let peers = SnapPlayerTests.peers
            harness.establish(
                Welcome(
                    peer: SnapPlayerTests.me, match: 1, seat: 2, tickRate: 30, resumeToken: 1, sessionKey: .zero))
            let players = peers.indices.map { seat in
                ServerReady.Player(peer: peers[seat], position: UInt8((seat + 1) % 3), name: "p\(seat)")
            }
            harness.receive(.serverReady(ServerReady(players: players)))
            harness.receive(
                .dealCards(
                    DealCards(hands: peers.indices.map { DealCards.Hand(peer: peers[$0], cards: server.hands[$0]) })))
        }

        mutating func turn(by seat: Int) {
            let card = try! server.turnCard(by: seat)
            harness.advance(.milliseconds(100))
            harness.receive(
                .cardTurned(CardTurned(peer: SnapPlayerTests.peers[seat], card: card, stateHash: server.stateHash)))
        }

        mutating func call(by seat: Int, outcome expected: SnapOutcome) {
            let outcome = try! server.callSnap(by: seat)
            #expect(outcome == expected)
            harness.advance(.milliseconds(10))
            harness.receive(
                .playerCalledSnap(
                    PlayerCalledSnap(peer: SnapPlayerTests.peers[seat], outcome: outcome, stateHash: server.stateHash)))
        }
    }

    /// One `SnapPlayer` called as a bot would call it, each call with a fresh context at the harness's time.
    private struct Harness {
        private let shard = MetricsShard(constantLabels: Labels([:]))
        private let meters: Meters
        private(set) var agent: SnapPlayer
        private var random: SeededRandom
        private(set) var now = Instant(nanoseconds: 1_000_000_000)
        private(set) var sent: [Message] = []

        init() {
            let persona = Persona(name: "snap", gameName: "snap", behavior: BehaviorName(rawValue: "snap"))
            meters = Meters(shard: shard, spec: persona, plan: Meters.Plan(description: SnapConnection.description))
            var context = AgentContext<SnapConnection>(
                now: now, random: SeededRandom(seed: 7), botNumber: 3, roundTrip: RoundTrip(), meters: meters,
                outbox: [])
            agent = SnapPlayer(context: &context)
            random = context.random
        }

        private func makeContext() -> AgentContext<SnapConnection> {
            AgentContext(now: now, random: random, botNumber: 3, roundTrip: RoundTrip(), meters: meters, outbox: [])
        }

        private mutating func call(_ body: (inout SnapPlayer, inout AgentContext<SnapConnection>) -> Void) {
            var context = makeContext()
            body(&agent, &context)
            random = context.random
            for case .message(let message) in context.outbox { sent.append(message) }
        }

        mutating func advance(_ duration: Duration) { now = now + duration }

        mutating func establish(_ welcome: Welcome) { call { $0.established(welcome, context: &$1) } }

        mutating func receive(_ message: Message) { call { $0.received(message, context: &$1) } }

        /// Wakes the agent each time it asks, up to `end` (bounded).
        mutating func wakeAll(until end: Instant) {
            var wakes = 0
            while wakes < 1_000, let due = agent.nextWake, due <= end {
                now = max(now, due)
                call { $0.wake(context: &$1) }
                wakes += 1
            }
        }

        var sentSnaps: Int { sent.filter { $0 == .playerShouldSnap }.count }

        var desyncs: UInt64 { shard.snapshot(at: 0).counterTotal(SkirmishMetrics.desyncs, where: [:]) }
    }
}
