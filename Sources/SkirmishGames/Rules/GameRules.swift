import SkirmishWire

/// The rules of one game as the reference server drives them: a value-type state machine fed seats, messages and
/// the time, answering with messages for its seats and notices for the server's counters.
///
/// The server owns everything around a match — sockets, handshakes, reliable delivery, resumes, matchmaking, limits —
/// and calls the rules only with events: a seat was filled, a message arrived from a seat, a player left, the clock
/// ticked. The rules answer through a ``MatchOutputs``: messages to seats (delivered reliably or not by their type,
/// ``GamePayload/reliable`` for a game that is not built in) and ``MatchNotice``s (started, completed, forfeited). The
/// server frees the match once ``isOver`` is true. Time is a parameter, never read: every call takes `now` as an
/// `Instant` on the server's monotonic clock (the time type of every machine in Skirmish; spans are `Duration`, so
/// `now - askedAt >= .seconds(2)` reads as it means), and the same calls give the same answers, so rules are tested
/// without a server and replayed exactly.
///
/// A game is registered with the server under its ``game`` description (its wire number, name, seats and tick rate)
/// in a ``GameRegistry``; the DocC article "Adding a game" walks through a complete one.
public protocol GameRules: Sendable {
    /// The game these rules play: wire number, name, seats allowed and tick rate.
    static var game: GameDescription { get }

    /// Whether the match has ended; the server then forgets it and its seats.
    var isOver: Bool { get }

    /// A player took `seat` (in `0..<seats` of the table); `peer` is its session's id as `Welcome` told it. Called
    /// once per seat as the table fills, so the rules start the match when the last one arrives.
    mutating func seatFilled(_ seat: Int, peer: UInt32, now: Instant, into out: inout MatchOutputs)

    /// A player left for good (quit, or did not come back within the resume window). The other seats are still
    /// there: end the match or play on without this one.
    mutating func seatLeft(_ seat: Int, now: Instant, into out: inout MatchOutputs)

    /// A player's connection dropped and its seat is held for a resume. The default does nothing.
    mutating func seatDetached(_ seat: Int, now: Instant)

    /// A detached player resumed its seat. The default does nothing.
    mutating func seatAttached(_ seat: Int, now: Instant)

    /// A message of the game from the player in `seat` (never a control message: the server handles those). The
    /// verdict tells the server what to count when the message is refused; a refused message must change nothing.
    mutating func receive(_ message: Message, from seat: Int, now: Instant, into out: inout MatchOutputs)
        -> MatchVerdict

    /// One tick of the game's clock, ``GameDescription/tickRate`` times a second. The default does nothing.
    mutating func tick(now: Instant, into out: inout MatchOutputs)
}

extension GameRules {
    /// Does nothing: the match waits with the seat empty.
    public mutating func seatDetached(_ seat: Int, now: Instant) {}
    /// Does nothing.
    public mutating func seatAttached(_ seat: Int, now: Instant) {}
    /// Does nothing: a game that only reacts to messages needs no clock.
    public mutating func tick(now: Instant, into out: inout MatchOutputs) {}
}
