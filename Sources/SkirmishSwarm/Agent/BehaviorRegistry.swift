import SkirmishOpponent
import SkirmishScript
import SkirmishWire

/// The behaviours a swarm's scripts may name, each a way to make the ``Agent`` that plays one match.
///
/// ``builtIn`` holds the behaviours DESIGN §5 lists; a program that embeds the swarm registers its own under new
/// names and hands the registry to ``SwarmConfiguration`` and ``ScriptLoader``, so a script can say
/// `behavior: my-bot` exactly as it says `behavior: chaser`.
public struct BehaviorRegistry: Sendable {
    /// Makes the agent for one match of a bot; `context` carries the persona and the bot's generator.
    public typealias Factory = @Sendable (inout AgentContext) -> any Agent

    struct Entry: Sendable {
        var games: Set<GameKind>?
        var make: Factory
    }

    private(set) var entries: [String: Entry] = [:]

    /// An empty registry (for tests; scripts usually want ``builtIn`` plus their own).
    public init() {}

    /// Adds (or replaces) the behaviour `name`, playable in `games` (`nil`: any game).
    public mutating func register(_ name: String, games: Set<GameKind>? = nil, make: @escaping Factory) {
        entries[name] = Entry(games: games, make: make)
    }

    /// The names a script may use.
    public var names: [String] { entries.keys.sorted() }

    /// Whether `name` is registered.
    public func contains(_ name: String) -> Bool { entries[name] != nil }

    /// The games `name` can play (`nil`: any, or not registered).
    public func games(for name: String) -> Set<GameKind>? { entries[name]?.games }

    /// A new agent of the behaviour `name` (`nil` when it is not registered): lets an agent wrap a built-in one.
    public func makeAgent(for name: String, context: inout AgentContext) -> (any Agent)? {
        entries[name]?.make(&context)
    }

    /// The behaviours every swarm knows.
    public static let builtIn: BehaviorRegistry = {
        var registry = BehaviorRegistry()
        registry.register("chaser", games: [.puck]) { context in
            PuckPlayer(context: &context, style: .chaser, inputRate: context.persona.inputRate)
        }
        registry.register("defender", games: [.puck]) { context in
            PuckPlayer(context: &context, style: .defender, inputRate: context.persona.inputRate)
        }
        registry.register("ai", games: [.puck]) { context in
            AIPlayer(
                context: &context, difficulty: context.persona.difficulty ?? .medium,
                inputRate: context.persona.inputRate)
        }
        registry.register("rogue") { context in Rogue(context: &context) }
        registry.register("idle") { context in
            guard context.persona.game == .puck else { return IdlePlayer() }
            return PuckPlayer(context: &context, style: .idle, inputRate: context.persona.inputRate)
        }
        // The chatter and the reconnector play their game as usual; the runtime adds their chat and drops.
        for name in ["chatter", "reconnector"] {
            registry.register(name) { context in Self.player(for: context.persona.game, context: &context) }
        }
        registry.register("snap-player", games: [.snap]) { context in SnapPlayer(context: &context) }
        registry.register("suns-player", games: [.suns]) { context in SunsPlayer() }
        return registry
    }()

    /// A built-in game's own player; a game a program added has none here, so its chatter or reconnector sits idle.
    private static func player(for game: GameKind, context: inout AgentContext) -> any Agent {
        switch game {
        case .puck: PuckPlayer(context: &context, style: .chaser, inputRate: context.persona.inputRate)
        case .snap: SnapPlayer(context: &context)
        case .suns: SunsPlayer()
        default: IdlePlayer()
        }
    }
}

extension BehaviorRegistry {
    /// The registered behaviours that are not built in, with their games, for ``ScriptLoader/init(customBehaviors:games:)``.
    public var scriptBehaviors: [String: Set<GameKind>] {
        var custom: [String: Set<GameKind>] = [:]
        for (name, entry) in entries where !BehaviorName.allCases.contains(BehaviorName(rawValue: name)) {
            custom[name] = entry.games ?? []
        }
        return custom
    }
}
