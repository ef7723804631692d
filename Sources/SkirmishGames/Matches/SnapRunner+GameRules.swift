import SkirmishWire

/// Snap as `GameRules`, for the registry and any generic driver (the server's `Match` calls the runner directly).
extension SnapRunner: ClockFreeRules {
    package static let game = GameDescription.snap
}
