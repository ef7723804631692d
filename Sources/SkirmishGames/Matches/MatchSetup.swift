import SkirmishWire

/// What the server tells a game's factory when a match is created (``GameRegistry/register(_:make:)``).
public struct MatchSetup: Sendable {
    /// The match's id, as `Welcome` tells its players.
    public var match: UInt32
    /// Seats at this table: what the first player's `Hello` asked for, within ``GameDescription/seats``.
    public var seats: Int
    /// A seed for the match's randomness, derived from the server's seed and the match id: a fixed server seed
    /// replays the same matches.
    public var seed: UInt64
    /// How long a dropped player's seat is held for a resume (`ServerConfiguration.resumeWindow`).
    public var resumeWindow: Duration
    /// The server's Snap turn limit (`ServerConfiguration.snapTurnLimit`).
    package var snapTurnLimit: Int
    /// The evaluation hook for Puck (`ServerConfiguration.shotMachine`).
    package var shots: ShotMachine.Configuration?

    package init(
        match: UInt32, seats: Int, seed: UInt64, resumeWindow: Duration, snapTurnLimit: Int,
        shots: ShotMachine.Configuration?
    ) {
        self.match = match
        self.seats = seats
        self.seed = seed
        self.resumeWindow = resumeWindow
        self.snapTurnLimit = snapTurnLimit
        self.shots = shots
    }

    /// A setup for testing a game's rules outside a server.
    public init(match: UInt32 = 1, seats: Int, seed: UInt64 = 0x5EED, resumeWindow: Duration = .seconds(15)) {
        self.init(match: match, seats: seats, seed: seed, resumeWindow: resumeWindow, snapTurnLimit: 0, shots: nil)
    }
}
