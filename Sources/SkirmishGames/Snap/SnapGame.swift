import SkirmishWire

/// The authoritative state of one Snap game (2–4 seats), as a value-type state machine.
///
/// The rules, precisely (see also the "Snap" article of the module documentation):
/// - The 52 cards are shuffled with `SeededRandom(seed:)` (Fisher–Yates, our own bounded draw, so the deal does not
///   depend on the standard library's shuffle) and dealt round-robin from seat 0: a 3-seat deal is 18, 17, 17.
/// - Each seat has a face-down hand (`hands[s]`, top first) and a face-up pile (`piles[s]`, top last). On its turn
///   a seat turns its top card onto its pile; a seat whose hand is empty first turns its pile over to become its
///   hand. Turns go to the next seat clockwise (increasing seat number) that holds cards.
/// - A snap call is **right** when two face-up piles show top cards of the same rank: the caller takes every face-up
///   pile (seat order, each bottom to top) onto the bottom of its hand. It is **too late** when no pair shows now
///   but a right call was already made since the last card was turned (the pair was won by an earlier call): nothing
///   changes. Otherwise it is **wrong**: the caller pays one card (from the top of its hand, or the bottom of its
///   pile when the hand is empty) to the bottom of each other holding seat's hand, clockwise from the caller, while
///   it has cards.
/// - A seat holding no cards is out. The last seat holding cards wins. After `turnLimit` turns (5,000
///   by default) the seat holding
///   the most cards wins (ties to the lower seat), so every game ends.
public struct SnapGame: Sendable, Hashable {
    /// The default turn limit: turns after which the game ends on card count.
    public static let turnLimit = 5_000

    /// Turns after which this game ends on card count (configuration, not state: not hashed; servers and replicas
    /// use the default unless both sides agree otherwise).
    public let turnLimit: Int

    /// The number of seats, 2–4.
    public let seats: Int
    /// Face-down hands, top card first.
    public internal(set) var hands: [[Card]]
    /// Face-up piles, top card last.
    public internal(set) var piles: [[Card]]
    /// The seat to turn the next card.
    public internal(set) var turn: Int
    /// The winner, once there is one.
    public internal(set) var winner: Int?
    /// Cards turned so far.
    public internal(set) var turnsTaken: Int
    /// Whether a right call has been made since the last card was turned (what makes a call "too late").
    public internal(set) var pairClaimed: Bool

    /// A shuffled, evenly dealt table; seat 0 turns first. `seats` must be 2–4.
    public init(seats: Int, seed: UInt64, turnLimit: Int = SnapGame.turnLimit) {
        precondition((2...WireLimits.maxSeats).contains(seats), "Snap is for 2–4 seats")
        var deck = Card.deck
        var rng = SeededRandom(seed: seed)
        for i in stride(from: deck.count - 1, to: 0, by: -1) {
            let j = Int(Self.draw(below: UInt64(i + 1), using: &rng))
            deck.swapAt(i, j)
        }
        var hands = [[Card]](repeating: [], count: seats)
        for (i, card) in deck.enumerated() {
            hands[i % seats].append(card)
        }
        self.init(uncheckedHands: hands, turnLimit: turnLimit)
    }

    /// A table with the given hands (top first), empty piles, seat 0 to turn — how a replica starts from
    /// `DealCards`. Throws `invalidDeal` unless there are 2–4 hands holding the 52 cards exactly once.
    public init(hands: [[Card]], turnLimit: Int = SnapGame.turnLimit) throws(SnapError) {
        guard (2...WireLimits.maxSeats).contains(hands.count) else { throw .invalidDeal }
        var seen = [Bool](repeating: false, count: WireLimits.deckSize)
        var count = 0
        for card in hands.joined() {
            guard !seen[Int(card.rawValue)] else { throw .invalidDeal }
            seen[Int(card.rawValue)] = true
            count += 1
        }
        guard count == WireLimits.deckSize else { throw .invalidDeal }
        self.init(uncheckedHands: hands, turnLimit: turnLimit)
    }

    private init(uncheckedHands hands: [[Card]], turnLimit: Int) {
        seats = hands.count
        self.turnLimit = max(turnLimit, 1)
        self.hands = hands
        piles = [[Card]](repeating: [], count: hands.count)
        turn = 0
        winner = nil
        turnsTaken = 0
        pairClaimed = false
        settle()
    }

    /// An unbiased draw in `0..<bound` by rejection, fixed here so the deal never changes with the toolchain.
    static func draw(below bound: UInt64, using rng: inout SeededRandom) -> UInt64 {
        let limit = UInt64.max - UInt64.max % bound
        while true {
            let x = rng.next()
            if x < limit { return x % bound }
        }
    }

    /// How many cards seat `seat` holds (hand and pile).
    public func cardCount(of seat: Int) -> Int { hands[seat].count + piles[seat].count }

    /// Whether seat `seat` still holds cards.
    public func isIn(_ seat: Int) -> Bool { cardCount(of: seat) > 0 }

    /// The top face-up card of each pile (`nil` for an empty pile).
    public var faceUp: [Card?] { piles.map(\.last) }

    /// Whether two face-up top cards share a rank (a snap call now would be right).
    public var hasPair: Bool {
        var ranks: UInt16 = 0
        for pile in piles {
            guard let top = pile.last else { continue }
            let bit: UInt16 = 1 << UInt16(top.rank)
            if ranks & bit != 0 { return true }
            ranks |= bit
        }
        return false
    }

    /// Where `seat` sits as seen by `viewer`: 0 is the viewer itself, then clockwise 1, 2, 3.
    public func relativePosition(of seat: Int, viewer: Int) -> Int {
        ((seat - viewer) % seats + seats) % seats
    }

    /// The absolute seat at `position` as seen by `viewer` (the inverse of ``relativePosition(of:viewer:)``).
    public func seat(atPosition position: Int, viewer: Int) -> Int {
        ((viewer + position) % seats + seats) % seats
    }

    /// Seat `seat` turns its top card onto its pile.
    public mutating func turnCard(by seat: Int) throws(SnapError) -> Card {
        try check(seat)
        guard seat == turn else { throw .notYourTurn }
        if hands[seat].isEmpty {
            hands[seat] = piles[seat]
            piles[seat] = []
        }
        let card = hands[seat].removeFirst()
        piles[seat].append(card)
        pairClaimed = false
        turnsTaken += 1
        turn = nextHolder(after: seat) ?? seat
        settle()
        return card
    }

    /// Seat `seat` calls snap.
    public mutating func callSnap(by seat: Int) throws(SnapError) -> SnapOutcome {
        try check(seat)
        if hasPair {
            for s in 0..<seats {
                hands[seat].append(contentsOf: piles[s])
                piles[s] = []
            }
            pairClaimed = true
            settle()
            return .right
        }
        if pairClaimed { return .tooLate }
        for k in 1..<seats {
            let receiver = (seat + k) % seats
            guard isIn(receiver), let card = takePenaltyCard(from: seat) else { continue }
            hands[receiver].append(card)
        }
        settle()
        return .wrong
    }

    /// Seat `seat` leaves the game: its cards (hand, then pile bottom to top) go to the bottom of the hand of the
    /// next holding seat clockwise, so 52 cards stay on the table, and it is out.
    public mutating func quit(seat: Int) throws(SnapError) {
        try check(seat)
        if let heir = nextHolder(after: seat) {
            hands[heir].append(contentsOf: hands[seat])
            hands[heir].append(contentsOf: piles[seat])
            hands[seat] = []
            piles[seat] = []
        }
        settle()
    }

    private func check(_ seat: Int) throws(SnapError) {
        guard winner == nil else { throw .gameOver }
        guard (0..<seats).contains(seat) else { throw .invalidSeat }
        guard isIn(seat) else { throw .eliminated }
    }

    private mutating func takePenaltyCard(from seat: Int) -> Card? {
        if !hands[seat].isEmpty { return hands[seat].removeFirst() }
        if !piles[seat].isEmpty { return piles[seat].removeFirst() }
        return nil
    }

    /// The next seat clockwise after `seat` (not `seat` itself) that holds cards.
    private func nextHolder(after seat: Int) -> Int? {
        for k in 1..<seats where isIn((seat + k) % seats) {
            return (seat + k) % seats
        }
        return nil
    }

    /// Moves the turn off a seat that is out and declares a winner when one seat is left or the turn limit is hit.
    private mutating func settle() {
        guard winner == nil else { return }
        if !isIn(turn), let next = nextHolder(after: turn) { turn = next }
        var holders = 0
        var holder = turn
        for s in 0..<seats where isIn(s) {
            holders += 1
            holder = s
        }
        if holders <= 1 {
            winner = holder
        } else if turnsTaken >= turnLimit {
            var best = 0
            for s in 1..<seats where cardCount(of: s) > cardCount(of: best) {
                best = s
            }
            winner = best
        }
    }
}
