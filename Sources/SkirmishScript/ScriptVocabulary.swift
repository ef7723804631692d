import SkirmishWire

/// What a script may say: the protocols a program registered, each with its options and its behaviours.
///
/// The loader itself knows only the runtime's own keys (name, profile, personas' weight, link, steps, thresholds…);
/// everything else is decoded by the entries here, which come from one catalogue (SkirmishSwarm's `Catalogue`), so a
/// user's protocol and behaviours are checked as strictly as the built-in ones.
public struct ScriptVocabulary: Sendable {
    /// The protocols by name (`snap`, `enet`, …).
    public var protocols: [String: ProtocolEntry] = [:]
    /// The protocol of a script that does not name one.
    public var defaultProtocol = "snap"
    /// The games the reference server plays (the built-in three and any a program registered), for protocols whose
    /// personas name one.
    public var games: [GameDescription] = GameDescription.builtIn

    /// A vocabulary with no protocol: every script is refused until one is registered.
    public init() {}

    /// One protocol's options and behaviours.
    public struct ProtocolEntry: Sendable {
        /// The transports it runs over (checked against a persona's `transport:`).
        public var transports: Set<Transport>
        /// Decodes the script's `protocol:` block (empty when the script names only the protocol).
        public var configuration: @Sendable (inout ScriptOptions) throws(ScriptError) -> OptionValue
        /// The keys ``configuration`` may read, for hints.
        public var configurationKeys: [String]
        /// Decodes a persona's protocol keys over the script's configuration.
        public var persona:
            @Sendable (inout ScriptOptions, OptionValue, PersonaContext) throws(ScriptError)
                -> PersonaProtocol
        /// The persona keys ``persona`` may read, for hints.
        public var personaKeys: [String]
        /// The behaviours a persona of this protocol may name.
        public var behaviors: [String: BehaviorEntry]
        /// Checks a `chat:` step's text: `nil` when the protocol can send it, else why not. `nil` closure: the
        /// protocol has no chat.
        public var chat: (@Sendable (String) -> String?)?

        /// An entry; see the properties.
        public init(
            transports: Set<Transport>, configurationKeys: [String] = [],
            configuration: @escaping @Sendable (inout ScriptOptions) throws(ScriptError) -> OptionValue,
            persona:
                @escaping @Sendable (inout ScriptOptions, OptionValue, PersonaContext) throws(ScriptError)
                -> PersonaProtocol,
            personaKeys: [String], behaviors: [String: BehaviorEntry], chat: (@Sendable (String) -> String?)?
        ) {
            self.transports = transports
            self.configuration = configuration
            self.configurationKeys = configurationKeys
            self.persona = persona
            self.personaKeys = personaKeys
            self.behaviors = behaviors
            self.chat = chat
        }
    }

    /// What a protocol's persona decoder is told besides the keys.
    public struct PersonaContext: Sendable {
        /// The persona's declared behaviour, if any.
        public var behavior: String?
        /// The games that behaviour can play, when it said (so a protocol can infer the game, or refuse another).
        public var behaviorGames: Set<GameKind>?
        /// The games the reference server plays.
        public var games: [GameDescription]

        /// A context.
        public init(behavior: String?, behaviorGames: Set<GameKind>?, games: [GameDescription]) {
            self.behavior = behavior
            self.behaviorGames = behaviorGames
            self.games = games
        }
    }

    /// What a protocol decoded from a persona.
    public struct PersonaProtocol: Sendable {
        /// The persona's connection configuration.
        public var configuration: OptionValue
        /// The `game` label of its series (a SNAP game's name, or the protocol's).
        public var gameName: String
        /// The behaviour a persona that names none plays; `nil`: it must name one.
        public var defaultBehavior: String?
        /// The persona's `input_rate` when it gives none.
        public var defaultInputRate: Double

        /// The decoded parts.
        public init(configuration: OptionValue, gameName: String, defaultBehavior: String?, defaultInputRate: Double) {
            self.configuration = configuration
            self.gameName = gameName
            self.defaultBehavior = defaultBehavior
            self.defaultInputRate = defaultInputRate
        }
    }

    /// One behaviour's options.
    public struct BehaviorEntry: Sendable {
        /// Decodes the behaviour's own persona keys, given the persona's decoded connection configuration (to refuse
        /// a game the behaviour cannot play, at the `behavior` key).
        public var options: @Sendable (inout ScriptOptions, OptionValue) throws(ScriptError) -> OptionValue
        /// The persona keys ``options`` may read: a key of another behaviour is refused with the name of its owner.
        public var keys: [String]
        /// Whether its traffic counts as legitimate (the `rogue` behaviour's does not).
        public var isLegit: Bool
        /// The games it can play; `nil`: any (or the protocol has no games).
        public var games: Set<GameKind>?

        /// An entry; see the properties.
        public init(
            keys: [String] = [], isLegit: Bool = true, games: Set<GameKind>? = nil,
            options: @escaping @Sendable (inout ScriptOptions, OptionValue) throws(ScriptError) -> OptionValue = {
                _, _ in .none
            }
        ) {
            self.options = options
            self.keys = keys
            self.isLegit = isLegit
            self.games = games
        }
    }
}
