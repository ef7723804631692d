import SkirmishWire

/// Puck as `GameRules`. The server's `Match` calls the runner's own methods directly (the 60 Hz path has no
/// existential dispatch); this conformance is what the registry and any generic driver see.
extension PuckRunner: GameRules {
    package static let game = GameDescription.puck

    package mutating func seatFilled(_ seat: Int, peer: UInt32, now: Instant, into out: inout MatchOutputs) {
        seatFilled(seat)
    }

    package mutating func seatLeft(_ seat: Int, now: Instant, into out: inout MatchOutputs) {
        seatLeft(seat, into: &out)
    }

    package mutating func seatDetached(_ seat: Int, now: Instant) { seatDetached(seat) }

    package mutating func seatAttached(_ seat: Int, now: Instant) { seatAttached(seat) }

    package mutating func receive(_ message: Message, from seat: Int, now: Instant, into out: inout MatchOutputs)
        -> MatchVerdict
    {
        receive(message, from: seat)
    }

    package mutating func tick(now: Instant, into out: inout MatchOutputs) { tick(into: &out) }
}
