import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishWire

extension Persona {
    /// A persona of SNAP's: its game and seats, its behaviour and that behaviour's options, as a script would give
    /// them (for programs and tests that build personas without a script).
    public init(
        name: String, weight: Int = 1, game: GameKind, gameName: String? = nil, behavior: BehaviorName,
        seats: Int = 2, inputRate: Double? = nil, link: LinkProfile = .perfect, transport: Transport? = nil,
        difficulty: Opponent.Level? = nil, snapReaction: ReactionSpec? = nil,
        chatEvery: ClosedRange<Duration>? = nil, reconnectEvery: ClosedRange<Duration>? = nil,
        offlineFor: ClosedRange<Duration>? = nil, rogueRate: Double? = nil,
        steps: [Step] = [.playUntilMatchOver, .repeat(times: nil)]
    ) {
        var configuration = SnapConnection.Configuration(game: game, seats: UInt8(clamping: seats))
        configuration.name = nil
        let options: OptionValue
        switch behavior {
        case .ai: options = OptionValue(SnapOptions.AI(difficulty: difficulty ?? .medium))
        case .snapPlayer: options = OptionValue(snapReaction.map { SnapOptions.SnapPlayer(reaction: $0) } ?? .init())
        case .chatter: options = OptionValue(SnapOptions.Chatter(every: chatEvery ?? .seconds(2) ... .seconds(5)))
        case .reconnector:
            let defaults = SnapOptions.Reconnector()
            options = OptionValue(
                SnapOptions.Reconnector(
                    every: reconnectEvery ?? defaults.every, offlineFor: offlineFor ?? defaults.offlineFor))
        case .rogue: options = OptionValue(SnapOptions.Rogue(rate: rogueRate ?? 20))
        default: options = .none
        }
        self.init(
            name: name, weight: weight, gameName: gameName ?? game.description, behavior: behavior,
            inputRate: inputRate ?? (game == .puck ? 30 : 2), link: link, transport: transport, steps: steps,
            connection: OptionValue(configuration), options: options, isLegit: behavior != .rogue)
    }

    /// The SNAP game this persona plays; `nil` for a persona of another protocol.
    public var game: GameKind? { connection.get(SnapConnection.Configuration.self)?.game }

    /// The seats a SNAP persona asks for; `nil` for a persona of another protocol.
    public var seats: Int? { connection.get(SnapConnection.Configuration.self).map { Int($0.seats) } }

    /// The `ai` behaviour's difficulty (a preset or `adaptive`), when this persona plays it.
    public var difficulty: Opponent.Level? { options.get(SnapOptions.AI.self)?.difficulty }
}
