import SkirmishGames
import SkirmishWire

/// Snap as `GameRules`, for the registry and any generic driver (`Match` calls the runner directly).
extension SnapRunner: GameRules {
    package static let game = GameDescription.snap

    package mutating func seatFilled(_ seat: Int, peer: UInt32, now: Duration, into out: inout MatchOutputs) {
        seatFilled(seat, peer: peer, into: &out)
    }

    package mutating func seatLeft(_ seat: Int, now: Duration, into out: inout MatchOutputs) {
        seatLeft(seat, into: &out)
    }

    package mutating func receive(_ message: Message, from seat: Int, now: Duration, into out: inout MatchOutputs)
        -> MatchVerdict
    {
        receive(message, from: seat, into: &out)
    }
}
