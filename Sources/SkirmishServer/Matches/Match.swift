import SkirmishWire

/// One running or forming match of any game: the server's only switch over games.
package enum Match: Sendable {
    case puck(PuckRunner)
    case snap(SnapRunner)
    case suns(SunsRelay)

    package var isOver: Bool {
        switch self {
        case .puck(let runner): runner.isOver
        case .snap(let runner): runner.isOver
        case .suns(let relay): relay.isOver
        }
    }

    // Each mutating method switches over `consume self` so the runner inside is mutated in place: a plain `switch
    // self` would leave a second reference to its arrays and copy them on every tick.

    package mutating func seatFilled(
        _ seat: Int, peer: UInt32, into out: inout [MatchOutput], notices: inout [MatchNotice]
    ) {
        switch consume self {
        case .puck(var runner):
            runner.seatFilled(seat)
            self = .puck(runner)
        case .snap(var runner):
            runner.seatFilled(seat, peer: peer, into: &out)
            self = .snap(runner)
        case .suns(var relay):
            relay.seatFilled(seat, peer: peer, into: &out, notices: &notices)
            self = .suns(relay)
        }
    }

    package mutating func receive(
        _ message: Message, from seat: Int, into out: inout [MatchOutput], notices: inout [MatchNotice]
    ) -> MatchVerdict {
        switch consume self {
        case .puck(var runner):
            let verdict = runner.receive(message, from: seat)
            self = .puck(runner)
            return verdict
        case .snap(var runner):
            let verdict = runner.receive(message, from: seat, into: &out, notices: &notices)
            self = .snap(runner)
            return verdict
        case .suns(var relay):
            let verdict = relay.receive(message, from: seat, into: &out, notices: &notices)
            self = .suns(relay)
            return verdict
        }
    }

    /// One 60 Hz server tick; only Puck runs on the clock.
    package mutating func tick(into out: inout [MatchOutput], notices: inout [MatchNotice]) {
        switch consume self {
        case .puck(var runner):
            runner.tick(into: &out, notices: &notices)
            self = .puck(runner)
        case let other: self = other
        }
    }

    /// Whether a dropped player's seat is held for a resume (Puck pauses; the turn-based and relayed games wait).
    package mutating func seatDetached(_ seat: Int) {
        switch consume self {
        case .puck(var runner):
            runner.seatDetached(seat)
            self = .puck(runner)
        case let other: self = other
        }
    }

    package mutating func seatAttached(_ seat: Int) {
        switch consume self {
        case .puck(var runner):
            runner.seatAttached(seat)
            self = .puck(runner)
        case let other: self = other
        }
    }

    package mutating func seatLeft(_ seat: Int, into out: inout [MatchOutput], notices: inout [MatchNotice]) {
        switch consume self {
        case .puck(var runner):
            runner.seatLeft(seat, into: &out, notices: &notices)
            self = .puck(runner)
        case .snap(var runner):
            runner.seatLeft(seat, into: &out, notices: &notices)
            self = .snap(runner)
        case .suns(var relay):
            relay.seatLeft(seat, into: &out, notices: &notices)
            self = .suns(relay)
        }
    }
}
