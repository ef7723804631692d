import NIOCore
import SkirmishWire

/// What decides the opponent's moves: it hears everything its session receives and picks an input each tick.
///
/// ``OpponentClient`` owns the session, the clock and the packets; a brain only thinks, in its own frame (itself at
/// the bottom). Loop-confined like the client that calls it.
protocol OpponentBrain {
    /// The server seated this opponent.
    mutating func welcomed(_ welcome: Welcome, now: NIODeadline)
    /// A message from the server (snapshots, goals, the end of the match).
    mutating func received(_ message: Message, at now: NIODeadline)
    /// A round trip measured from one of the client's pings.
    mutating func measured(rtt: TimeAmount, at now: NIODeadline)
    /// The input to send now, numbered by the brain; called once per 60 Hz tick while the match is on.
    mutating func decide(now: NIODeadline) -> PaddleState?
}
