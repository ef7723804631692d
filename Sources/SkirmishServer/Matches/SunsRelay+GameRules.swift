import SkirmishGames
import SkirmishWire

/// Suns as `GameRules`, for the registry and any generic driver (`Match` calls the relay directly).
extension SunsRelay: ClockFreeRules {
    package static let game = GameDescription.suns
}
