import SkirmishWire

/// What one call into a game's rules produced: messages for seats and notices for the server's counters.
///
/// The server hands the same value to every call and empties it after delivering what it holds, so adding to it
/// allocates nothing once its storage has grown.
public struct MatchOutputs: Sendable {
    /// Messages to deliver, in order.
    public var messages: [MatchOutput]
    /// What the server counts (per game: matches started, completed, forfeits, desyncs).
    public var notices: [MatchNotice]

    /// Nothing to deliver or count yet.
    public init() {
        messages = []
        notices = []
    }

    /// Whether there is nothing to deliver or count.
    @inlinable public var isEmpty: Bool { messages.isEmpty && notices.isEmpty }

    /// Sends `message` to the player in `seat` (a seat nobody holds drops it).
    @inlinable public mutating func send(_ message: Message, to seat: Int) {
        messages.append(MatchOutput(seat: seat, message))
    }

    /// Adds one addressed message.
    @inlinable public mutating func append(_ output: MatchOutput) {
        messages.append(output)
    }

    /// Reports what happened to the match, for the server's per-game counters.
    @inlinable public mutating func report(_ notice: MatchNotice) {
        notices.append(notice)
    }
}

/// A message a match wants delivered to one of its seats.
public struct MatchOutput: Sendable, Hashable {
    /// The seat of the table (in `0..<seats`) whose player gets the message.
    public var seat: Int
    /// What it gets, delivered by its type's class (reliable or not).
    public var message: Message

    /// `message` for the player in `seat`.
    @inlinable public init(seat: Int, _ message: Message) {
        self.seat = seat
        self.message = message
    }
}

/// What a match made of one client message; anything but ``accepted`` is counted as a rejected packet
/// (`skirmish_server_rejected_packets_total{reason}`).
public enum MatchVerdict: Sendable, Hashable {
    /// The rules acted on it.
    case accepted
    /// Not a message this game expects now (`out_of_state`).
    case outOfState
    /// A move out of the player's turn (`out_of_turn`).
    case outOfTurn
    /// A field the rules refuse (`bad_value`).
    case badValue
}

/// Something a match reports to the server's per-game counters.
public enum MatchNotice: Sendable, Hashable {
    /// Play began (`skirmish_server_matches_started_total{game}`).
    case started
    /// The match reached its end with a result (`skirmish_server_matches_completed_total{game}`).
    case completed
    /// The player in `seat` forfeited by leaving (`skirmish_server_forfeits_total`).
    case forfeited(seat: Int)
    /// The players' own views of the end were compared (Suns' tallies); a disagreement is a desync of the game
    /// (`skirmish_server_desyncs_total{game}`).
    case compared(agreed: Bool)
}
