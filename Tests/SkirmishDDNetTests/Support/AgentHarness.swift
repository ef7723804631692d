import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

@testable import SkirmishDDNet
@testable import SkirmishSwarm

/// Drives one DDNet behaviour by hand, as a bot would, with the time given: each call gets a fresh
/// ``AgentContext`` and what the agent sent is kept in ``sent``; its checks are counted in a metrics shard of its own.
struct AgentHarness<A: Agent> where A.Connection == DDNetConnection {
    private(set) var agent: A
    private(set) var now: Instant
    private(set) var sent: [DDNetConnection.Message] = []
    private var random: SeededRandom
    private let shard = MetricsShard(constantLabels: Labels([:]))
    private let meters: Meters

    /// A harness for the agent `make` builds for a bot of `persona`, at time `start`.
    init(
        persona: Persona, series: BehaviorSeries = BehaviorSeries(), seed: UInt64 = 1, start: Instant = .zero,
        make: (inout AgentContext<DDNetConnection>) -> A
    ) {
        meters = Meters(
            shard: shard, spec: persona, plan: Meters.Plan(description: DDNetConnection.description, behavior: series))
        now = start
        random = SeededRandom(seed: seed)
        var context = AgentContext<DDNetConnection>(
            now: start, random: random, botNumber: 3, roundTrip: RoundTrip(), meters: meters, outbox: [])
        agent = make(&context)
        random = context.random
    }

    /// Calls the agent at `time` with a fresh context, keeping what it sent.
    private mutating func call(at time: Instant, _ body: (inout A, inout AgentContext<DDNetConnection>) -> Void) {
        now = time
        var context = AgentContext<DDNetConnection>(
            now: time, random: random, botNumber: 3, roundTrip: RoundTrip(), meters: meters, outbox: [])
        body(&agent, &context)
        random = context.random
        for outgoing in context.outbox {
            if case .message(let message) = outgoing { sent.append(message) }
        }
    }

    /// The player entered the game as `clientID`.
    mutating func establish(clientID: Int?, at time: Instant) {
        call(at: time) { agent, context in
            agent.established(
                DDNetConnection.Session(clientID: clientID, name: "bot-3", map: "dm1", mapCRC: 0, mapSize: 0, tick: 0),
                context: &context)
        }
    }

    /// A message from the server at `time`.
    mutating func receive(_ message: DDNetConnection.Message, at time: Instant) {
        call(at: time) { agent, context in agent.received(message, context: &context) }
    }

    /// Wakes the agent whenever it asked, up to `end`, handing it `world(now)` before each wake when given;
    /// returns how many wakes there were. Bounded by `limit`.
    @discardableResult
    mutating func run(until end: Instant, limit: Int = 100_000, world: ((Instant) -> World)? = nil) -> Int {
        var wakes = 0
        while wakes < limit, let due = agent.nextWake, due <= end {
            if let world { receive(.world(world(max(due, now))), at: max(due, now)) }
            call(at: max(due, now)) { agent, context in agent.wake(context: &context) }
            wakes += 1
        }
        now = max(now, end)
        return wakes
    }

    /// The inputs the agent sent, in order.
    var inputs: [DDNetConnection.Input] {
        sent.compactMap { if case .input(let input) = $0 { input } else { nil } }
    }

    /// The chat lines the agent said, in order.
    var lines: [String] {
        sent.compactMap { if case .say(let text) = $0 { text } else { nil } }
    }

    /// How often check `name` was judged, and failed.
    func check(_ name: String) -> (judged: UInt64, failed: UInt64) {
        let snapshot = shard.snapshot(at: 0)
        return (
            snapshot.counterTotal(SkirmishMetrics.checks, where: ["check": name]),
            snapshot.counterTotal(SkirmishMetrics.checksFailed, where: ["check": name])
        )
    }
}

extension Instant {
    /// `seconds` after the clock's zero.
    static func at(_ seconds: Double) -> Instant { Instant(nanoseconds: UInt64(seconds * 1e9)) }
}
