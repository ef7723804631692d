import SkirmishWire

/// Seats players at tables: one queue of forming matches per game and seat count, with a waiting timeout.
///
/// A pure state machine: the server asks it where a new player sits, tells it when a waiting player leaves, and
/// polls it for matches that waited too long. It never allocates per packet and holds at most `maxMatches` forming
/// matches.
package struct Matchmaker: Sendable {
    package struct Configuration: Sendable, Hashable {
        /// Forming matches this matchmaker may hold at once.
        package var maxForming: Int
        /// How long a forming match waits for its last seat (nanoseconds) before its players are sent away.
        package var waitTimeout: UInt64
        /// Match ids are `firstID`, `firstID + idStride`, … so several matchmakers (one per event loop) never collide.
        package var firstID: UInt32
        package var idStride: UInt32
        /// The seats each game allows (its ``GameDescription/seats``); a table of any other game is refused.
        package var seats: [GameKind: ClosedRange<Int>]

        package init(
            maxForming: Int = 10_000, waitTimeout: UInt64 = 30_000_000_000, firstID: UInt32 = 1, idStride: UInt32 = 1,
            games: [GameDescription] = GameDescription.builtIn
        ) {
            self.maxForming = maxForming
            self.waitTimeout = waitTimeout
            self.firstID = firstID
            self.idStride = idStride
            seats = Dictionary(games.map { ($0.kind, $0.seats) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Which table a match is for.
    package struct Table: Sendable, Hashable {
        package var game: GameKind
        package var seats: Int

        package init(game: GameKind, seats: Int) {
            self.game = game
            self.seats = seats
        }
    }

    /// Where a player was seated.
    package struct Seating: Sendable, Hashable {
        package var match: UInt32
        package var seat: Int
        /// True when this player filled the last seat: the match can start.
        package var isNew: Bool
        package var isFull: Bool
    }

    /// A match that waited too long, with the players who were waiting in it.
    package struct Expired: Sendable, Hashable {
        package var match: UInt32
        package var peers: [UInt32]
    }

    private struct Forming: Sendable {
        var table: Table
        var seats: [UInt32?]
        var created: UInt64
    }

    package let configuration: Configuration
    private var forming: [UInt32: Forming] = [:]
    private var queues: [Table: [UInt32]] = [:]
    private var nextID: UInt32

    package init(_ configuration: Configuration = .init()) {
        self.configuration = configuration
        nextID = configuration.firstID
    }

    /// Matches still waiting for players.
    package var formingCount: Int { forming.count }

    /// Whether a player for `table` who asks for no match in particular would open a new one: no forming match of
    /// that table has a free seat.
    package func opensMatch(at table: Table) -> Bool { openSeat(at: table) == nil }

    /// The first forming match of `table` with a free seat, and that seat.
    private func openSeat(at table: Table) -> (id: UInt32, match: Forming, seat: Int)? {
        guard let id = queues[table]?.first, let match = forming[id], let seat = match.seats.firstIndex(of: nil) else {
            return nil
        }
        return (id, match, seat)
    }

    /// Seats `peer` at a table of `table`, in `requested` when non-zero (a friend's match), or where a seat is open.
    package mutating func seat(peer: UInt32, at table: Table, requested: UInt32 = 0, now: UInt64) -> Result<
        Seating, RejectReason
    > {
        guard configuration.seats[table.game]?.contains(table.seats) == true else { return .failure(.badRequest) }
        if requested != 0 {
            guard var match = forming[requested] else { return .failure(.noSuchMatch) }
            guard match.table == table, let seat = match.seats.firstIndex(of: nil) else {
                return .failure(.noSuchMatch)
            }
            match.seats[seat] = peer
            return .success(place(match, id: requested, seat: seat, isNew: false))
        }
        if let (id, open, seat) = openSeat(at: table) {
            var match = open
            match.seats[seat] = peer
            return .success(place(match, id: id, seat: seat, isNew: false))
        }
        guard forming.count < configuration.maxForming else { return .failure(.serverFull) }
        let id = nextID
        nextID &+= configuration.idStride
        if nextID == 0 { nextID = configuration.firstID }
        var match = Forming(table: table, seats: Array(repeating: nil, count: table.seats), created: now)
        match.seats[0] = peer
        queues[table, default: []].append(id)
        return .success(place(match, id: id, seat: 0, isNew: true))
    }

    private mutating func place(_ match: Forming, id: UInt32, seat: Int, isNew: Bool) -> Seating {
        let full = !match.seats.contains(nil)
        if full {
            forming[id] = nil
            queues[match.table]?.removeAll { $0 == id }
        } else {
            forming[id] = match
        }
        return Seating(match: id, seat: seat, isNew: isNew, isFull: full)
    }

    /// A waiting player left before its match started; its seat opens again.
    package mutating func leave(peer: UInt32, match id: UInt32) {
        guard var match = forming[id], let seat = match.seats.firstIndex(of: peer) else { return }
        match.seats[seat] = nil
        if match.seats.allSatisfy({ $0 == nil }) {
            forming[id] = nil
            queues[match.table]?.removeAll { $0 == id }
        } else {
            forming[id] = match
        }
    }

    /// Removes and returns the matches that have waited longer than the timeout.
    package mutating func expire(now: UInt64) -> [Expired] {
        var expired: [Expired] = []
        for (id, match) in forming where now &- match.created >= configuration.waitTimeout {
            expired.append(Expired(match: id, peers: match.seats.compactMap { $0 }))
        }
        for item in expired {
            if let table = forming[item.match]?.table { queues[table]?.removeAll { $0 == item.match } }
            forming[item.match] = nil
        }
        return expired.sorted { $0.match < $1.match }
    }
}
