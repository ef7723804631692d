import Logging
import NIOCore
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire
import Synchronization

/// Runs single players outside a script, on the same runtime as a swarm: the practice page's AI opponent,
/// `skirmish ai-eval`'s players and the benchmarks use it.
///
/// Each player is a bot with one ``Agent`` for one match: the runtime connects it (cookie handshake, reliable
/// delivery, resume, keepalives), pings it at the given interval (its ``AgentContext`` carries the round trip), wakes
/// the agent when it asks and ends the player when the match is over or ``stop(_:)`` is called. What a player
/// learns — its seat, its score, how its match ended — the agent reports itself (to a `Sendable` box it shares with
/// whoever started it); the runner only starts and stops.
public final class AgentRunner: Sendable {
    /// One running player.
    public struct Player: Sendable, Hashable {
        let number: Int
    }

    /// How one player connects and plays.
    public struct Configuration<Connection: ClientProtocol>: Sendable {
        /// The server and transport.
        public var target: Target
        /// The persona: its name labels the metrics; its link and input rate are used.
        public var persona: Persona
        /// The connection's settings (for SNAP: the game, seats, match and ping interval).
        public var connection: Connection.Configuration

        /// A player for `persona` against `target` with `connection`'s settings.
        public init(target: Target, persona: Persona, connection: Connection.Configuration) {
            self.target = target
            self.persona = persona
            self.connection = connection
        }
    }

    private let loop: ClientLoop
    private let group: NIOLoopBound<BotGroup>
    private let numbers = NumberSource()

    /// Starts the runner's loop; `streamLoops` carries TCP and WebSocket players. `logger` receives their desync
    /// episodes and connections that end before their match (rate-limited).
    public init(
        name: String = "skirmish-agents", streamLoops: (any EventLoopGroup)? = nil, seed: UInt64 = 1,
        logger: Logger = Logger(label: "skirmish.agents")
    ) throws {
        let loop = try ClientLoop(name: name)
        var context = SwarmContext(
            personas: PersonaDeal(single: [Persona(name: "agent", gameName: "none", behavior: .idle)]), seed: seed,
            constantLabels: Labels([:]), target: Target(transport: .udp, host: "127.0.0.1", port: 1), alternates: [:])
        context.streamLoops = streamLoops
        context.logger = logger
        let settled = context
        let made = try loop.submit {
            NIOLoopBound(BotGroup(loop: loop, index: 0, groupCount: 1, context: settled), eventLoop: loop)
        }.wait()
        self.loop = loop
        group = made
    }

    deinit {
        let group = self.group
        loop.execute { group.value.stop() }
        loop.stop()
    }

    /// Starts a player that plays one match with the agent `makeAgent` makes.
    @discardableResult
    public func start<A: Agent>(
        _ configuration: Configuration<A.Connection>,
        makeAgent: @escaping @Sendable (inout AgentContext<A.Connection>) -> A
    ) async throws -> Player {
        let number = numbers.next()
        let group = self.group
        var persona = configuration.persona
        persona.connection = OptionValue(configuration.connection)
        let settled = persona
        try await loop.submit {
            group.value.spawnPlayer(
                persona: settled, target: configuration.target, number: number, now: .now(), make: makeAgent)
        }.get()
        return Player(number: number)
    }

    /// Ends `player`: a polite goodbye if it is seated. Nothing if its match already ended.
    public func stop(_ player: Player) async {
        let group = self.group
        try? await loop.submit { group.value.retirePlayer(player.number, now: .now()) }.get()
    }

    /// The figures of every player so far (packets, round trips, desyncs, ...).
    public func snapshot() async -> MetricsSnapshot {
        let group = self.group
        return (try? await loop.submit { group.value.shard.handOff(at: WallTime.milliseconds()) }.get())?.snapshot()
            ?? MetricsSnapshot()
    }
}

/// Hands out player numbers (unique within one runner).
private final class NumberSource: Sendable {
    private let counter = Mutex(0)
    func next() -> Int {
        counter.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
