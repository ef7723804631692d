/// What every side of the protocol must agree on about one game: its wire number, its name, its seats and its clock.
///
/// The server's game registry, the swarm's scripts and the metrics all read a game's identity from here, so a game
/// added by a program (not built in) is described once. The rules themselves live with the server (`GameRules` in
/// SkirmishGames); this is only what a client needs to ask for a seat and label what it measures.
public struct GameDescription: Sendable, Hashable, CustomStringConvertible {
    /// The wire number a client puts in `Hello`; unique among the games one server plays.
    public var kind: GameKind
    /// The label of the game in scripts (`game: count`) and metrics (`game="count"`): lowercase letters, digits and
    /// `-`, unique among the games one server plays.
    public var name: String
    /// How many seats a table of this game may have (a `Hello`'s seats wanted must be in this range).
    public var seats: ClosedRange<Int>
    /// Ticks per second the server runs a match of this game at (a divisor of 60), announced in `Welcome`.
    public var tickRate: Int

    /// A game's description; ``problem`` says whether a registry will take it.
    public init(kind: GameKind, name: String, seats: ClosedRange<Int>, tickRate: Int = 60) {
        self.kind = kind
        self.name = name
        self.seats = seats
        self.tickRate = tickRate
    }

    /// The name and the wire number: `count (4)`.
    public var description: String { "\(name) (\(kind.rawValue))" }

    /// Real-time air hockey: two seats, 60 Hz.
    public static let puck = GameDescription(kind: .puck, name: "puck", seats: 2...2)
    /// Turn-based cards: two to four seats.
    public static let snap = GameDescription(kind: .snap, name: "snap", seats: 2...WireLimits.maxSeats)
    /// A relayed race: two seats.
    public static let suns = GameDescription(kind: .suns, name: "suns", seats: 2...2)

    /// The built-in games, in wire-number order.
    public static let builtIn: [GameDescription] = [.snap, .puck, .suns]

    /// Why a description cannot be registered, or `nil` when it can: a readable sentence naming the field and the fix.
    public var problem: String? {
        if kind.rawValue == 0 { return "game `\(name)` has wire number 0, which means no game; pick 4…255" }
        let allowed = name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
        if name.isEmpty || name.utf8.count > 32 || !allowed {
            return "game name `\(name)` must be 1–32 lowercase letters, digits or `-` (it is a script word and a label)"
        }
        if seats.lowerBound < 1 || seats.upperBound > Int(UInt8.max) {
            return "game `\(name)` seats \(seats) must lie in 1…255 (a Hello carries seats in one byte)"
        }
        if tickRate < 1 || tickRate > 60 || 60 % tickRate != 0 {
            return
                "game `\(name)` tick rate \(tickRate) must divide 60 (the server's clock): 1, 2, 3, 4, 5, 6, 10, …, 60"
        }
        return nil
    }
}
