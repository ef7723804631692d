import SkirmishWire

/// A message a match wants delivered to one of its seats.
package struct MatchOutput: Sendable, Hashable {
    package var seat: Int
    package var message: Message

    package init(seat: Int, _ message: Message) {
        self.seat = seat
        self.message = message
    }
}

/// What a match made of one client message.
package enum MatchVerdict: Sendable, Hashable {
    case accepted
    case outOfState
    case outOfTurn
    case badValue
}

/// Something a match reports to the server's counters.
package enum MatchNotice: Sendable, Hashable {
    case started
    case completed
    case forfeited(seat: Int)
    case tallyCompared(agreed: Bool)
}
