import SkirmishWire

/// Built-in rules that never look at the time (Snap, Suns): they implement the event methods without `now`, and
/// this protocol turns them into `GameRules` once, for the registry and any generic driver (the server's `Match`
/// calls them directly).
protocol ClockFreeRules: GameRules {
    mutating func seatFilled(_ seat: Int, peer: UInt32, into out: inout MatchOutputs)
    mutating func seatLeft(_ seat: Int, into out: inout MatchOutputs)
    mutating func receive(_ message: Message, from seat: Int, into out: inout MatchOutputs) -> MatchVerdict
}

extension ClockFreeRules {
    package mutating func seatFilled(_ seat: Int, peer: UInt32, now: Instant, into out: inout MatchOutputs) {
        seatFilled(seat, peer: peer, into: &out)
    }

    package mutating func seatLeft(_ seat: Int, now: Instant, into out: inout MatchOutputs) {
        seatLeft(seat, into: &out)
    }

    package mutating func receive(_ message: Message, from seat: Int, now: Instant, into out: inout MatchOutputs)
        -> MatchVerdict
    {
        receive(message, from: seat, into: &out)
    }
}
