import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishWire

extension Catalogue {
    /// SNAP, the reference server's protocol, with its behaviours (DESIGN §5): `chaser`, `defender`, `ai`, `idle`,
    /// `chatter`, `snap-player`, `suns-player`, `reconnector` and `rogue`.
    public static let builtIn: Catalogue = {
        var catalogue = Catalogue()
        catalogue.registerSnap()
        return catalogue
    }()

    /// The behaviour a SNAP persona plays when it names a built-in game but no behaviour.
    static func snapDefaultBehavior(for game: GameKind) -> String? {
        switch game {
        case .puck: "chaser"
        case .snap: "snap-player"
        case .suns: "suns-player"
        default: nil
        }
    }

    /// Adds SNAP and its built-in behaviours.
    mutating func registerSnap() {
        register(
            protocol: SnapConnection.self, configurationKeys: ["ping_interval", "handshake_timeout"],
            configuration: { (options: inout ScriptOptions) throws(ScriptError) -> SnapConnection.Configuration in
                var configuration = SnapConnection.Configuration(game: .puck)
                if let interval = try options.duration("ping_interval", positive: true) {
                    configuration.pingInterval = interval
                }
                if let timeout = try options.duration("handshake_timeout", positive: true) {
                    configuration.handshakeTimeout = timeout
                }
                return configuration
            },
            personaKeys: ["game", "seats"],
            persona: {
                (
                    options: inout ScriptOptions, base: SnapConnection.Configuration,
                    context: ScriptVocabulary.PersonaContext
                )
                    throws(ScriptError) -> PersonaSettings<SnapConnection> in
                try Self.snapPersona(&options, base: base, context: context)
            },
            chat: ChatSupport(
                problem: { text in
                    text.utf8.count <= WireLimits.maxChat && !text.utf8.contains(0)
                        ? nil : "chat text must be at most \(WireLimits.maxChat) bytes with no NUL"
                },
                message: { .chat(Chat(text: $0)) }))
        registerSnapBehaviors()
    }

    /// A persona's `game:` and `seats:`: the game named, or the only one its behaviour plays.
    static func snapPersona(
        _ options: inout ScriptOptions, base: SnapConnection.Configuration, context: ScriptVocabulary.PersonaContext
    ) throws(ScriptError) -> PersonaSettings<SnapConnection> {
        let games = context.games
        let declaredGames = context.behaviorGames
        let description: GameDescription
        if let chosen = try options.choice("game", games.map { (name: $0.name, value: $0) }) {
            description = chosen
        } else if let declaredGames, declaredGames.count == 1, let only = declaredGames.first,
            let known = games.first(where: { $0.kind == only })
        {
            description = known
        } else {
            throw options.error(
                "this persona does not say which `game` it plays",
                hint: "add `game:` with one of \(games.map(\.name).joined(separator: ", "))")
        }
        if let declaredGames, let behavior = context.behavior, !declaredGames.contains(description.kind) {
            throw options.error(
                at: "behavior", "behavior `\(behavior)` cannot play \(description.name)",
                hint:
                    "it plays \(declaredGames.map { kind in games.first { $0.kind == kind }?.name ?? "\(kind)" }.sorted().joined(separator: ", "))"
            )
        }
        let range = description.seats
        let seats =
            try options.integer("seats", in: range) ?? min(max(2, range.lowerBound), range.upperBound)
        var configuration = base
        configuration.game = description.kind
        configuration.seats = UInt8(seats)
        let defaultBehavior = snapDefaultBehavior(for: description.kind)
        if context.behavior == nil, defaultBehavior == nil {
            throw options.error(
                "this persona plays \(description.name), which has no built-in behaviour",
                hint: "add `behavior:` naming one registered for \(description.name)")
        }
        return PersonaSettings(
            configuration: configuration, gameName: description.name, defaultBehavior: defaultBehavior,
            defaultInputRate: description.kind == .puck ? 30 : 2)
    }

    /// What a SNAP behaviour playing `game` measures besides the protocol.
    static func snapSeries(_ game: GameKind) -> BehaviorSeries {
        switch game {
        case .puck:
            BehaviorSeries(
                figures: [.tickLateness, .snapshotAge, .prediction, .desyncs, .matches],
                desyncParts: ["hash", "puck", "paddles", "score", "phase"], checks: ["score_monotonic"])
        case .snap:
            BehaviorSeries(
                figures: [.desyncs, .matches], desyncParts: ["hash", "piles", "turn", "outcome", "deal"],
                checks: ["reply_state", "snap_outcome"])
        case .suns:
            BehaviorSeries(figures: [.desyncs, .tickLateness, .matches], desyncParts: ["captures"])
        default:
            BehaviorSeries()
        }
    }

    private mutating func registerSnapBehaviors() {
        let series: @Sendable (SnapConnection.Configuration) -> BehaviorSeries = { Self.snapSeries($0.game) }
        register(behavior: "chaser", games: [.puck], series: series) { context in
            PuckPlayer(context: &context, style: .chaser, inputRate: context.persona.inputRate)
        }
        register(behavior: "defender", games: [.puck], series: series) { context in
            PuckPlayer(context: &context, style: .defender, inputRate: context.persona.inputRate)
        }
        register(
            behavior: "ai", games: [.puck], keys: ["difficulty"], series: series,
            options: { (options: inout ScriptOptions, _: SnapConnection.Configuration) throws(ScriptError) in
                OptionValue(
                    SnapOptions.AI(difficulty: try options.choice("difficulty", Opponent.Level.self) ?? .medium))
            },
            make: { context in
                AIPlayer(
                    context: &context,
                    difficulty: context.persona.options.get(SnapOptions.AI.self)?.difficulty ?? .medium,
                    inputRate: context.persona.inputRate)
            }
        )
        register(
            behavior: "human", games: [.puck], keys: ["skill"], series: series,
            options: { (options: inout ScriptOptions, _: SnapConnection.Configuration) throws(ScriptError) in
                OptionValue(SnapOptions.Human(skill: try options.choice("skill", HumanPlayer.Skill.self) ?? .casual))
            },
            make: { context in
                HumanLikePlayer(
                    context: &context, skill: context.persona.options.get(SnapOptions.Human.self)?.skill ?? .casual,
                    inputRate: context.persona.inputRate)
            }
        )
        register(
            behavior: "snap-player", games: [.snap], keys: ["snap_reaction"], series: series,
            options: { (options: inout ScriptOptions, _: SnapConnection.Configuration) throws(ScriptError) in
                guard var reaction = try options.options("snap_reaction") else {
                    return OptionValue(SnapOptions.SnapPlayer())
                }
                guard let mean = try reaction.duration("mean") else {
                    throw options.error(
                        at: "snap_reaction", "snap_reaction needs `mean`", hint: "{mean: 600ms, stddev: 150ms}")
                }
                let stddev = try reaction.duration("stddev") ?? .zero
                try reaction.finish(known: ["mean", "stddev"])
                return OptionValue(SnapOptions.SnapPlayer(reaction: ReactionSpec(mean: mean, stddev: stddev)))
            },
            make: { context in SnapPlayer(context: &context) }
        )
        register(behavior: "suns-player", games: [.suns], series: series) { _ in SunsPlayer() }
        register(
            behavior: "rogue", keys: ["rogue_rate"], isLegit: false,
            options: { (options: inout ScriptOptions, _: SnapConnection.Configuration) throws(ScriptError) in
                OptionValue(SnapOptions.Rogue(rate: try options.rate("rogue_rate", max: 10_000) ?? 20))
            },
            make: { context in Rogue(context: &context) }
        )
        register(behavior: "idle", of: SnapConnection.self) { persona in
            let game = persona.connection.get(SnapConnection.Configuration.self)?.game ?? .puck
            if game == .puck {
                return TypedBehavior<PuckPlayer>(
                    make: { PuckPlayer(context: &$0, style: .idle, inputRate: $0.persona.inputRate) }, series: series)
            }
            return TypedBehavior<IdlePlayer>(make: { _ in IdlePlayer() }, series: { _ in BehaviorSeries() })
        }
        // The chatter and the reconnector play their game as usual, around the game's own player.
        register(
            behavior: "chatter", of: SnapConnection.self, keys: ["chat_every"],
            options: { (options: inout ScriptOptions, _: SnapConnection.Configuration) throws(ScriptError) in
                OptionValue(
                    SnapOptions.Chatter(every: try options.durationRange("chat_every") ?? .seconds(2) ... .seconds(5)))
            },
            kind: { persona in
                let every = persona.options.get(SnapOptions.Chatter.self)?.every ?? .seconds(2) ... .seconds(5)
                let message: @Sendable (String) -> Message = { .chat(Chat(text: $0)) }
                switch Self.snapGame(of: persona) {
                case .puck:
                    return Self.kind(series: series, inner: Self.chaser) { Chatter($0, every: every, message: message) }
                case .snap:
                    return Self.kind(series: series, inner: { SnapPlayer(context: &$0) }) {
                        Chatter($0, every: every, message: message)
                    }
                case .suns:
                    return Self.kind(series: series, inner: { _ in SunsPlayer() }) {
                        Chatter($0, every: every, message: message)
                    }
                default:
                    return Self.kind(series: series, inner: { _ in IdlePlayer() }) {
                        Chatter($0, every: every, message: message)
                    }
                }
            }
        )
        register(
            behavior: "reconnector", of: SnapConnection.self, keys: ["reconnect_every", "offline_for"],
            options: { (options: inout ScriptOptions, _: SnapConnection.Configuration) throws(ScriptError) in
                let defaults = SnapOptions.Reconnector()
                return OptionValue(
                    SnapOptions.Reconnector(
                        every: try options.durationRange("reconnect_every") ?? defaults.every,
                        offlineFor: try options.durationRange("offline_for") ?? defaults.offlineFor))
            },
            kind: { persona in
                let settings = persona.options.get(SnapOptions.Reconnector.self) ?? SnapOptions.Reconnector()
                let (every, offline) = (settings.every, settings.offlineFor)
                switch Self.snapGame(of: persona) {
                case .puck:
                    return Self.kind(series: series, inner: Self.chaser) {
                        Reconnector($0, every: every, offlineFor: offline)
                    }
                case .snap:
                    return Self.kind(series: series, inner: { SnapPlayer(context: &$0) }) {
                        Reconnector($0, every: every, offlineFor: offline)
                    }
                case .suns:
                    return Self.kind(series: series, inner: { _ in SunsPlayer() }) {
                        Reconnector($0, every: every, offlineFor: offline)
                    }
                default:
                    return Self.kind(series: series, inner: { _ in IdlePlayer() }) {
                        Reconnector($0, every: every, offlineFor: offline)
                    }
                }
            }
        )
    }

    /// The game a SNAP persona plays.
    static func snapGame(of persona: Persona) -> GameKind {
        persona.connection.get(SnapConnection.Configuration.self)?.game ?? .puck
    }

    /// A Puck chaser, the Puck player a wrapper plays around.
    @Sendable
    static func chaser(_ context: inout AgentContext<SnapConnection>) -> PuckPlayer {
        PuckPlayer(context: &context, style: .chaser, inputRate: context.persona.inputRate)
    }

    /// The kind of an agent that wraps the one `inner` makes.
    static func kind<Inner: Agent, Wrapper: Agent>(
        series: @escaping @Sendable (SnapConnection.Configuration) -> BehaviorSeries,
        inner: @escaping @Sendable (inout AgentContext<SnapConnection>) -> Inner,
        wrap: @escaping @Sendable (Inner) -> Wrapper
    ) -> any BehaviorKind where Inner.Connection == SnapConnection, Wrapper.Connection == SnapConnection {
        TypedBehavior<Wrapper>(make: { context in wrap(inner(&context)) }, series: series)
    }
}
