import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishWire

/// Everything a swarm can speak and play, registered once: protocols with their script options, and each protocol's
/// behaviours with theirs.
///
/// ``builtIn`` holds SNAP (the reference server's protocol) and its behaviours; a program adds its own protocol (a
/// ``ClientProtocol`` and how to decode its `protocol:` block) and behaviours (an ``Agent`` type and how to decode
/// its persona keys), hands the catalogue to ``SwarmConfiguration``, and loads scripts with its ``scriptLoader``:
/// a script then says `protocol: mine` and `behavior: my-bot` exactly as it says `protocol: snap` and
/// `behavior: chaser`, and is checked as strictly.
public struct Catalogue: Sendable {
    struct ProtocolRecord: Sendable {
        var script: ScriptVocabulary.ProtocolEntry
        var support: any ProtocolSupport
        var behaviors: [String: BehaviorRecord] = [:]
    }

    struct BehaviorRecord: Sendable {
        var script: ScriptVocabulary.BehaviorEntry
        /// The typed maker for a persona of this behaviour (a wrapper may pick its inner agent by the persona).
        var kind: @Sendable (Persona) -> any BehaviorKind
    }

    private(set) var records: [String: ProtocolRecord] = [:]
    /// The protocol of a script that names none.
    public var defaultProtocol = "snap"
    /// The games the reference server plays — their rules, for the embedded server (`ServerConfiguration.games`),
    /// and their names and seats, for protocols whose personas name one (SNAP's `game:`).
    public var games: GameRegistry = .builtIn

    /// An empty catalogue; most programs start from ``builtIn``.
    public init() {}

    /// The registered protocols' names.
    public var protocols: [String] { records.keys.sorted() }

    /// The behaviours registered for `protocolName`.
    public func behaviors(of protocolName: String) -> [String] {
        records[protocolName]?.behaviors.keys.sorted() ?? []
    }

    /// The description of the protocol registered as `name`.
    public func description(of name: String) -> ProtocolDescription? { records[name]?.support.description }

    // MARK: Registering

    /// What a protocol makes of a persona's own keys.
    public struct PersonaSettings<Connection: ClientProtocol>: Sendable {
        /// The persona's connection configuration.
        public var configuration: Connection.Configuration
        /// The `game` label of its series.
        public var gameName: String
        /// The behaviour a persona that names none plays (`nil`: it must name one).
        public var defaultBehavior: String?
        /// The persona's `input_rate` when it gives none.
        public var defaultInputRate: Double

        /// Settings for one persona.
        public init(
            configuration: Connection.Configuration, gameName: String, defaultBehavior: String? = nil,
            defaultInputRate: Double = 2
        ) {
            self.configuration = configuration
            self.gameName = gameName
            self.defaultBehavior = defaultBehavior
            self.defaultInputRate = defaultInputRate
        }
    }

    /// How a protocol chats: a `chat:` step and the `chatter` behaviour use it.
    public struct ChatSupport<Connection: ClientProtocol>: Sendable {
        /// Why a text cannot be sent (too long, a forbidden byte), or `nil` when it can.
        public var problem: @Sendable (String) -> String?
        /// The protocol's chat message with `text`.
        public var message: @Sendable (String) -> Connection.Message

        /// A chat for the protocol.
        public init(
            problem: @escaping @Sendable (String) -> String? = { _ in nil },
            message: @escaping @Sendable (String) -> Connection.Message
        ) {
            self.problem = problem
            self.message = message
        }
    }

    /// Registers `connection`'s protocol under its ``ProtocolDescription/name``.
    ///
    /// `configuration` decodes the script's `protocol:` block (it may read `configurationKeys`); `persona` decodes a
    /// persona's protocol keys (`personaKeys`) over it, given the persona's declared behaviour if any and the
    /// catalogue's games. Both read a
    /// ``ScriptOptions`` and throw located ``ScriptError``s. Registering a name twice replaces the protocol and its
    /// behaviours.
    public mutating func register<Connection: ClientProtocol>(
        protocol connection: Connection.Type, configurationKeys: [String] = [],
        configuration: @escaping @Sendable (inout ScriptOptions) throws(ScriptError) -> Connection.Configuration,
        personaKeys: [String] = [],
        persona:
            @escaping @Sendable (
                inout ScriptOptions, Connection.Configuration, ScriptVocabulary.PersonaContext
            ) throws(ScriptError) -> PersonaSettings<Connection> = { _, configuration, _ in
                PersonaSettings(configuration: configuration, gameName: Connection.description.name)
            },
        chat: ChatSupport<Connection>? = nil
    ) {
        let name = Connection.description.name
        let decodeConfiguration: @Sendable (inout ScriptOptions) throws(ScriptError) -> OptionValue = {
            (options: inout ScriptOptions) throws(ScriptError) -> OptionValue in
            OptionValue(try configuration(&options))
        }
        let decodePersona:
            @Sendable (inout ScriptOptions, OptionValue, ScriptVocabulary.PersonaContext) throws(ScriptError) ->
                ScriptVocabulary.PersonaProtocol = {
                    (options: inout ScriptOptions, base: OptionValue, context: ScriptVocabulary.PersonaContext)
                        throws(ScriptError) -> ScriptVocabulary.PersonaProtocol in
                    guard let base = base.get(Connection.Configuration.self) else {
                        throw options.error("the protocol's configuration is not a \(name) configuration")
                    }
                    let settings = try persona(&options, base, context)
                    return ScriptVocabulary.PersonaProtocol(
                        configuration: OptionValue(settings.configuration), gameName: settings.gameName,
                        defaultBehavior: settings.defaultBehavior, defaultInputRate: settings.defaultInputRate)
                }
        var problem: (@Sendable (String) -> String?)?
        if let chat { problem = chat.problem }
        let script = ScriptVocabulary.ProtocolEntry(
            transports: Connection.description.transports, configurationKeys: configurationKeys,
            configuration: decodeConfiguration, persona: decodePersona, personaKeys: personaKeys, behaviors: [:],
            chat: problem)
        records[name] = ProtocolRecord(script: script, support: TypedProtocol<Connection>(chat: chat?.message))
    }

    /// Registers the behaviour `name` for its agent's protocol, which must be registered already.
    ///
    /// `games` limits it to those games of the reference server (a persona naming it needs no `game:` when it plays
    /// one; one naming another game is refused). `options` decodes the persona keys the behaviour owns (`keys`), given
    /// the persona's connection configuration; `make` builds a fresh agent for each match, reading those options from
    /// `context.persona.options`. `series` says which series of its own exist at 0 for a persona. A behaviour whose
    /// traffic is hostile (`isLegit: false`) is kept out of the legitimate figures.
    @inline(__always)
    public mutating func register<A: Agent>(
        behavior name: String, games: Set<GameKind>? = nil, keys: [String] = [], isLegit: Bool = true,
        series: @escaping @Sendable (A.Connection.Configuration) -> BehaviorSeries = { _ in BehaviorSeries() },
        options:
            @escaping @Sendable (inout ScriptOptions, A.Connection.Configuration) throws(ScriptError)
            -> OptionValue = { _, _ in .none },
        make: @escaping @Sendable (inout AgentContext<A.Connection>) -> A
    ) {
        let kind = TypedBehavior<A>(make: make, series: series)
        register(behavior: name, of: A.Connection.self, games: games, keys: keys, isLegit: isLegit, options: options) {
            _ in kind
        }
    }

    /// Registers a behaviour whose agent type depends on the persona (a wrapper around the game's own player).
    mutating func register<Connection: ClientProtocol>(
        behavior name: String, of connection: Connection.Type, games: Set<GameKind>? = nil, keys: [String] = [],
        isLegit: Bool = true,
        options:
            @escaping @Sendable (inout ScriptOptions, Connection.Configuration) throws(ScriptError)
            -> OptionValue = { _, _ in .none },
        kind: @escaping @Sendable (Persona) -> any BehaviorKind
    ) {
        let protocolName = Connection.description.name
        precondition(records[protocolName] != nil, "register protocol `\(protocolName)` before its behaviours")
        let decode: @Sendable (inout ScriptOptions, OptionValue) throws(ScriptError) -> OptionValue = {
            (scriptOptions: inout ScriptOptions, configuration: OptionValue) throws(ScriptError) -> OptionValue in
            guard let configuration = configuration.get(Connection.Configuration.self) else {
                throw scriptOptions.error("the persona's configuration is not a \(protocolName) configuration")
            }
            return try options(&scriptOptions, configuration)
        }
        let entry = ScriptVocabulary.BehaviorEntry(keys: keys, isLegit: isLegit, games: games, options: decode)
        records[protocolName]!.behaviors[name] = BehaviorRecord(script: entry, kind: kind)
    }

    /// Adds a game of a program's own to the reference server's games, played by `Rules`: the embedded server plays
    /// it, and personas may name it. `make` builds each new match's rules.
    ///
    /// Throws when the game's description is not valid or its wire number or name is taken.
    public mutating func register<Rules: GameRules>(
        game rules: Rules.Type, make: @escaping @Sendable (MatchSetup) -> Rules
    ) throws(GameRegistryError) {
        try games.register(rules, make: make)
    }

    // MARK: Scripts

    /// What scripts may say with this catalogue.
    public var scriptVocabulary: ScriptVocabulary {
        var vocabulary = ScriptVocabulary()
        vocabulary.defaultProtocol = defaultProtocol
        vocabulary.games = games.games
        for (name, record) in records {
            var entry = record.script
            entry.behaviors = record.behaviors.mapValues(\.script)
            vocabulary.protocols[name] = entry
        }
        return vocabulary
    }

    /// A loader for scripts in this catalogue's protocols and behaviours.
    public var scriptLoader: ScriptLoader { ScriptLoader(vocabulary: scriptVocabulary) }

    /// The typed maker of `persona`'s behaviour in `protocolName`.
    func kind(of persona: Persona, in protocolName: String) -> (any BehaviorKind)? {
        records[protocolName]?.behaviors[persona.behavior.rawValue].map { $0.kind(persona) }
    }

    /// The protocol registered as `name`, typed.
    func support(of name: String) -> (any ProtocolSupport)? { records[name]?.support }
}

/// A registered protocol, typed: what the runtime needs of it besides its connections.
protocol ProtocolSupport: Sendable {
    var description: ProtocolDescription { get }
    /// Whether a connection with `configuration` can see packets of kind `kind`.
    func expects(kind: Int, with configuration: OptionValue) -> Bool
}

struct TypedProtocol<Connection: ClientProtocol>: ProtocolSupport {
    let chat: (@Sendable (String) -> Connection.Message)?

    var description: ProtocolDescription { Connection.description }

    func expects(kind: Int, with configuration: OptionValue) -> Bool {
        guard let configuration = configuration.get(Connection.Configuration.self) else { return true }
        return Connection.expects(kind: kind, with: configuration)
    }
}

/// A registered behaviour, typed by its agent: personas of one kind share one squad (one ``Shell``) on each loop.
protocol BehaviorKind: Sendable {
    /// Names the agent type: personas whose kinds share it share a squad.
    var agentType: ObjectIdentifier { get }
    /// A squad for this kind's agents on `group`'s loop.
    func makeSquad(in group: BotGroup) -> any BotSquad
    /// Adds `persona`'s profile to `squad` (made by ``makeSquad(in:)``) and returns its index there.
    func addProfile(
        to squad: any BotSquad, persona: Persona, meters: Meters, target: Target, support: any ProtocolSupport,
        single: Bool
    ) -> Int
    /// What the behaviour measures for `persona`.
    func series(for persona: Persona) -> BehaviorSeries
}

struct TypedBehavior<A: Agent>: BehaviorKind {
    let make: @Sendable (inout AgentContext<A.Connection>) -> A
    let series: @Sendable (A.Connection.Configuration) -> BehaviorSeries
    /// Makes the squad; a closure made where `A` is concrete (the registration), so the squad, its shell and the
    /// closures the shell gives its loop run code specialised to `A` — through this kind's witnesses they would not.
    let squad: @Sendable (BotGroup) -> any BotSquad

    @inline(__always)
    init(
        make: @escaping @Sendable (inout AgentContext<A.Connection>) -> A,
        series: @escaping @Sendable (A.Connection.Configuration) -> BehaviorSeries
    ) {
        self.make = make
        self.series = series
        squad = { group in Squad<A>(group: group) }
    }

    var agentType: ObjectIdentifier { ObjectIdentifier(A.self) }

    func makeSquad(in group: BotGroup) -> any BotSquad { squad(group) }

    func addProfile(
        to squad: any BotSquad, persona: Persona, meters: Meters, target: Target, support: any ProtocolSupport,
        single: Bool
    ) -> Int {
        guard let squad = squad as? Squad<A>,
            let configuration = persona.connection.get(A.Connection.Configuration.self)
        else {
            preconditionFailure("persona `\(persona.name)` does not match its behaviour's agent or protocol")
        }
        return squad.environment.add(
            BotEnvironment<A>.Profile(
                persona: persona, meters: meters, configuration: configuration, target: target, steps: persona.steps,
                make: make, chat: (support as? TypedProtocol<A.Connection>)?.chat, single: single))
    }

    func series(for persona: Persona) -> BehaviorSeries {
        persona.connection.get(A.Connection.Configuration.self).map(series) ?? BehaviorSeries()
    }
}
