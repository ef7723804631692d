import SkirmishGames
import SkirmishWire

/// "Count", a game the library does not know: two players take turns adding 1, 2 or 3 to a running total, and the
/// one who brings it to 21 wins. A player who lets its turn clock run out has 1 added for it.
///
/// The worked example of the DocC article "Adding a game", written against the public API only: a value type fed
/// seats, messages and the time; it answers through `MatchOutputs` and never reads a clock.
struct CountRules: GameRules {
    static let game = GameDescription(kind: GameKind(rawValue: 4), name: "count", seats: 2...2, tickRate: 10)
    /// The total that wins.
    static let goal = 21
    /// How long a player may think before the rules play 1 for it.
    static let turnClock = Duration.seconds(2)

    private var present = [false, false]
    private var started = false
    private var total = 0
    private var turn = 0
    /// When the player on turn was asked to move (set on the first tick after it was asked).
    private var askedAt: Instant?
    private(set) var isOver = false

    mutating func seatFilled(_ seat: Int, peer: UInt32, now: Instant, into out: inout MatchOutputs) {
        present[seat] = true
        guard !started, !present.contains(false) else { return }
        started = true
        out.report(.started)
        announce(now: now, into: &out)
    }

    mutating func receive(_ message: Message, from seat: Int, now: Instant, into out: inout MatchOutputs)
        -> MatchVerdict
    {
        guard case .game(let payload) = message, let move = CountMessage(payload), case .add(let amount) = move else {
            return .outOfState
        }
        guard started, !isOver else { return .outOfState }
        guard seat == turn else { return .outOfTurn }
        guard (1...3).contains(amount) else { return .badValue }
        play(amount, now: now, into: &out)
        return .accepted
    }

    /// The turn clock: a player that does not move within ``turnClock`` has 1 played for it.
    mutating func tick(now: Instant, into out: inout MatchOutputs) {
        guard started, !isOver else { return }
        guard let askedAt else {
            self.askedAt = now
            return
        }
        if now - askedAt >= Self.turnClock { play(1, now: now, into: &out) }
    }

    /// A player left: the other one wins by forfeit.
    mutating func seatLeft(_ seat: Int, now: Instant, into out: inout MatchOutputs) {
        present[seat] = false
        guard started, !isOver else { return }
        isOver = true
        out.report(.forfeited(seat: seat))
        let other = 1 - seat
        if present[other] { out.send(CountMessage.over(winner: other, total: total).message, to: other) }
    }

    private mutating func play(_ amount: Int, now: Instant, into out: inout MatchOutputs) {
        total = min(total + amount, Self.goal)
        if total == Self.goal {
            isOver = true
            for seat in 0..<2 where present[seat] {
                out.send(CountMessage.over(winner: turn, total: total).message, to: seat)
            }
            out.report(.completed)
            return
        }
        turn = 1 - turn
        announce(now: now, into: &out)
    }

    private mutating func announce(now: Instant, into out: inout MatchOutputs) {
        askedAt = nil
        for seat in 0..<2 where present[seat] {
            out.send(CountMessage.state(total: total, turn: turn).message, to: seat)
        }
    }
}

/// Count's three messages, carried as `GamePayload` bytes: the first byte says which.
enum CountMessage: Equatable {
    /// Server to players: the total, and whose turn it is.
    case state(total: Int, turn: Int)
    /// A player to the server: add 1–3.
    case add(Int)
    /// Server to players: the winner's seat and the final total.
    case over(winner: Int, total: Int)

    init?(_ payload: GamePayload) {
        let bytes = payload.bytes
        switch (bytes.first, bytes.count) {
        case (1, 3): self = .state(total: Int(bytes[1]), turn: Int(bytes[2]))
        case (2, 2): self = .add(Int(bytes[1]))
        case (3, 3): self = .over(winner: Int(bytes[1]), total: Int(bytes[2]))
        default: return nil
        }
    }

    var message: Message {
        switch self {
        case .state(let total, let turn): .game(GamePayload(bytes: [1, UInt8(total), UInt8(turn)]))
        case .add(let amount): .game(GamePayload(bytes: [2, UInt8(amount)]))
        case .over(let winner, let total): .game(GamePayload(bytes: [3, UInt8(winner), UInt8(total)]))
        }
    }
}
