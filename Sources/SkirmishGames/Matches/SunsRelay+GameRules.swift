import SkirmishWire

/// Suns as `GameRules`, for the registry and any generic driver (the server's `Match` calls the relay directly).
extension SunsRelay: ClockFreeRules {
    package static let game = GameDescription.suns
}
