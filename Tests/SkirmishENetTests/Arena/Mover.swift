import SkirmishENet
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

// The "Your server speaks ENet" article's example, step 2: a behaviour for the arena, and one catalogue.

/// An arena player: it sends its position at the persona's input rate, `moves` times, and checks what the server
/// sends: ticks never go back, events come one after another, other players' positions lie on the table.
struct Mover: Agent {
    typealias Connection = ENetConnection<ArenaCodec>

    /// The behaviour's own script option: `moves:`, how many positions each player sends.
    struct Options: Sendable, Hashable {
        var moves = 100
    }

    let moves: Int
    /// Nanoseconds between positions.
    let period: Int64
    private var next: Instant?
    private var step = 0
    private var lastTick: UInt32?
    private var lastEvent: UInt32?

    init(context: inout AgentContext<Connection>) {
        moves = context.persona.options.get(Options.self)?.moves ?? 100
        period = Int64(1e9 / context.persona.inputRate)
    }

    var nextWake: Instant? { next }
    var isMatchOver: Bool { false }

    mutating func established(_ session: ENetSession, context: inout AgentContext<Connection>) {
        next = context.now
    }

    mutating func wake(context: inout AgentContext<Connection>) {
        guard let due = next, context.now >= due else { return }
        context.send(.position(x: Float(step % 32) * 10, y: 100 + Float(context.botNumber % 28) * 10))
        step += 1
        let missed = max(0, context.now.nanoseconds(since: due)) / period
        next = step < moves ? due.advanced(byNanoseconds: period * (missed + 1)) : nil
    }

    mutating func received(_ message: ArenaMessage, context: inout AgentContext<Connection>) {
        switch message {
        case .state(let tick):
            if let lastTick { context.check("state_monotonic", passed: tick > lastTick) }
            lastTick = tick
        case .event(let number):
            if let lastEvent { context.check("events_in_order", passed: number == lastEvent &+ 1) }
            lastEvent = number
        case .position(let x, let y):
            context.check("position_on_table", passed: (0...320).contains(x) && (0...480).contains(y))
        }
    }
}

extension Catalogue {
    /// The arena's protocol ("ENet + my messages") and its `mover` behaviour.
    static func arena() -> Catalogue {
        var catalogue = Catalogue()
        catalogue.registerENet(codec: ArenaCodec(), codecKeys: ["relay"]) {
            (options: inout ScriptOptions, codec: inout ArenaCodec) throws(ScriptError) in
            if let relay = try options.flag("relay") { codec.relay = relay }
        }
        catalogue.register(
            behavior: "mover", keys: ["moves"],
            series: { _ in BehaviorSeries(checks: ["state_monotonic", "events_in_order", "position_on_table"]) },
            options: {
                (options: inout ScriptOptions, _: ENetConnection<ArenaCodec>.Configuration) throws(ScriptError) in
                OptionValue(Mover.Options(moves: try options.integer("moves", in: 1...1_000_000) ?? 100))
            },
            make: { context in Mover(context: &context) })
        return catalogue
    }
}
