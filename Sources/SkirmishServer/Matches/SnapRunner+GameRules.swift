import SkirmishGames
import SkirmishWire

/// Snap as `GameRules`, for the registry and any generic driver (`Match` calls the runner directly).
extension SnapRunner: ClockFreeRules {
    package static let game = GameDescription.snap
}
