import SkirmishWire

/// The games a reference server plays: for each wire number, its description and how to make a match's rules.
///
/// The server plays the registry in its `ServerConfiguration.games` (SkirmishServer); ``builtIn`` holds Snap, Puck
/// and Suns. A program adds a game of its own with ``register(_:make:)``, and a `Hello` for any number not
/// registered is refused as `unknown_game`, counted, and answered with the games the server does play. The
/// registry's order is the order of the per-game series in the server's metrics. It lives beside the rules rather
/// than in the server so that whatever else knows the games (the swarm's catalogue) can hold the same registry.
public struct GameRegistry: Sendable {
    /// One registered game.
    public struct Entry: Sendable {
        /// Its wire number, name, seats and tick rate.
        public let game: GameDescription
        let make: @Sendable (MatchSetup) -> any GameRules
    }

    /// The registered games, in registration order.
    public private(set) var entries: [Entry] = []
    /// Position in ``entries`` by wire number: the handshake's lookup costs one array read.
    private var positions = [Int16](repeating: -1, count: 256)

    /// A registry with no games (a server with it refuses every `Hello`); start from ``builtIn`` to keep them.
    public init() {}

    /// Snap (1), Puck (2) and Suns (3).
    public static let builtIn: GameRegistry = {
        var registry = GameRegistry()
        registry.add(SnapRunner.self) { setup in
            SnapRunner(seats: setup.seats, seed: setup.seed, turnLimit: setup.snapTurnLimit)
        }
        registry.add(PuckRunner.self) { setup in
            PuckRunner(
                resumeWindowTicks: max(Int(setup.resumeWindow / .seconds(1)) * PuckConstants.tickRate, 1),
                shots: setup.shots.map { ShotMachine($0, match: setup.match) })
        }
        registry.add(SunsRelay.self) { setup in SunsRelay(seats: setup.seats) }
        return registry
    }()

    /// Adds a game played by `Rules`, under `Rules.game`'s wire number and name; `make` builds the rules of each new
    /// match once its first player is seated.
    ///
    /// Throws when the description is not valid (``GameDescription/problem``) or its number or name is taken.
    public mutating func register<Rules: GameRules>(
        _ rules: Rules.Type, make: @escaping @Sendable (MatchSetup) -> Rules
    ) throws(GameRegistryError) {
        let game = Rules.game
        if let problem = game.problem { throw GameRegistryError(problem) }
        if let taken = self[game.kind] {
            throw GameRegistryError(
                "wire number \(game.kind.rawValue) of game `\(game.name)` is taken by `\(taken.name)`; "
                    + "pick a free number (\(freeNumberHint))")
        }
        if self[game.name] != nil {
            throw GameRegistryError("a game named `\(game.name)` is already registered; give yours another name")
        }
        add(rules, make: make)
    }

    private mutating func add<Rules: GameRules>(_: Rules.Type, make: @escaping @Sendable (MatchSetup) -> Rules) {
        positions[Int(Rules.game.kind.rawValue)] = Int16(entries.count)
        entries.append(Entry(game: Rules.game, make: { make($0) }))
    }

    /// This registry with only the games whose wire number is in `kinds`, in the same order: a server that hosts
    /// some of the built-in games (a Snap-only server, one without Puck), as a conformance test needs one.
    package func restricted(to kinds: Set<GameKind>) -> GameRegistry {
        var kept = GameRegistry()
        for entry in entries where kinds.contains(entry.game.kind) {
            kept.positions[Int(entry.game.kind.rawValue)] = Int16(kept.entries.count)
            kept.entries.append(entry)
        }
        return kept
    }

    /// The registered games' descriptions, in registration order (for a swarm's `ScriptLoader`).
    public var games: [GameDescription] { entries.map(\.game) }

    /// The game registered under wire number `kind`.
    public subscript(kind: GameKind) -> GameDescription? {
        position(of: kind).map { entries[$0].game }
    }

    /// The game registered as `name`.
    public subscript(name: String) -> GameDescription? {
        entries.first { $0.game.name == name }?.game
    }

    /// Where `kind` sits in ``entries``.
    package func position(of kind: GameKind) -> Int? {
        let position = positions[Int(kind.rawValue)]
        return position < 0 ? nil : Int(position)
    }

    /// The rules of a new match of `kind`, or `nil` when it is not registered.
    package func makeRules(_ kind: GameKind, _ setup: MatchSetup) -> (any GameRules)? {
        position(of: kind).map { entries[$0].make(setup) }
    }

    /// The text of a `Reject` for a `Hello` asking for `kind`, which the registry does not hold: the games it does
    /// hold (`game 9 unknown; plays snap=1 puck=2 suns=3`), as many as fit the wire's 60 bytes.
    package func refusal(for kind: GameKind) -> String {
        var text = "game \(kind.rawValue) unknown; plays"
        for (index, entry) in entries.enumerated() {
            let item = " \(entry.game.name)=\(entry.game.kind.rawValue)"
            let more = index < entries.count - 1 ? 4 : 0
            guard text.utf8.count + item.utf8.count + more <= WireLimits.maxRejectText else { return text + " …" }
            text += item
        }
        return text
    }

    private var freeNumberHint: String {
        let free = (4...255).first { positions[$0] < 0 }
        return free.map { "\($0) is free" } ?? "all 255 are taken"
    }
}

/// Why a game could not be registered: which game, what is wrong, and what to do.
public struct GameRegistryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The whole explanation, e.g. "wire number 2 of game `other-puck` is taken by `puck`; pick a free number (4 is
    /// free)".
    public let description: String

    init(_ description: String) { self.description = description }
}
