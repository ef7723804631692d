import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishWire

/// One running or forming match: the rules of its game, as the ``SkirmishGames/GameRegistry`` made them.
///
/// The built-in games have cases of their own so the 60 Hz path calls Puck's rules directly, with no existential
/// dispatch per packet or tick; any other registered game is ``other(_:)`` and called through ``GameRules``. This is
/// the server's only switch over games, and it names no game's messages. The server's loops keep NIO's time; rules
/// get the same monotonic clock as an `Instant`.
package enum Match: Sendable {
    case puck(PuckRunner)
    case snap(SnapRunner)
    case suns(SunsRelay)
    case other(any GameRules)

    /// Wraps rules a registry made, in their own case when they are a built-in game's.
    package init(_ rules: any GameRules) {
        if let runner = rules as? PuckRunner {
            self = .puck(runner)
        } else if let runner = rules as? SnapRunner {
            self = .snap(runner)
        } else if let relay = rules as? SunsRelay {
            self = .suns(relay)
        } else {
            self = .other(rules)
        }
    }

    /// The game this match plays.
    package var game: GameDescription {
        switch self {
        case .puck: PuckRunner.game
        case .snap: SnapRunner.game
        case .suns: SunsRelay.game
        case .other(let rules): type(of: rules).game
        }
    }

    package var isOver: Bool {
        switch self {
        case .puck(let runner): runner.isOver
        case .snap(let runner): runner.isOver
        case .suns(let relay): relay.isOver
        case .other(let rules): rules.isOver
        }
    }

    // Each mutating method switches over `consume self` so the rules inside are mutated in place: a plain `switch
    // self` would leave a second reference to their arrays and copy them on every tick.

    package mutating func seatFilled(_ seat: Int, peer: UInt32, now: NIODeadline, into out: inout MatchOutputs) {
        switch consume self {
        case .puck(var runner):
            runner.seatFilled(seat)
            self = .puck(runner)
        case .snap(var runner):
            runner.seatFilled(seat, peer: peer, into: &out)
            self = .snap(runner)
        case .suns(var relay):
            relay.seatFilled(seat, peer: peer, into: &out)
            self = .suns(relay)
        case .other(var rules):
            rules.seatFilled(seat, peer: peer, now: Instant(now), into: &out)
            self = .other(rules)
        }
    }

    package mutating func receive(
        _ message: Message, from seat: Int, now: NIODeadline, into out: inout MatchOutputs
    ) -> MatchVerdict {
        switch consume self {
        case .puck(var runner):
            let verdict = runner.receive(message, from: seat)
            self = .puck(runner)
            return verdict
        case .snap(var runner):
            let verdict = runner.receive(message, from: seat, into: &out)
            self = .snap(runner)
            return verdict
        case .suns(var relay):
            let verdict = relay.receive(message, from: seat, into: &out)
            self = .suns(relay)
            return verdict
        case .other(var rules):
            let verdict = rules.receive(message, from: seat, now: Instant(now), into: &out)
            self = .other(rules)
            return verdict
        }
    }

    /// One 60 Hz server tick (`tick` counts them); a game with a slower ``GameDescription/tickRate`` ticks on every
    /// (60 / rate)-th. Of the built-in games only Puck runs on the clock.
    package mutating func tick(_ tick: UInt64, now: NIODeadline, into out: inout MatchOutputs) {
        switch consume self {
        case .puck(var runner):
            runner.tick(into: &out)
            self = .puck(runner)
        case .other(var rules):
            let every = UInt64(60 / max(type(of: rules).game.tickRate, 1))
            if tick % every == 0 { rules.tick(now: Instant(now), into: &out) }
            self = .other(rules)
        case let other: self = other
        }
    }

    /// A dropped player's seat is held for a resume (Puck pauses; the turn-based and relayed games wait).
    package mutating func seatDetached(_ seat: Int, now: NIODeadline) {
        switch consume self {
        case .puck(var runner):
            runner.seatDetached(seat)
            self = .puck(runner)
        case .other(var rules):
            rules.seatDetached(seat, now: Instant(now))
            self = .other(rules)
        case let other: self = other
        }
    }

    package mutating func seatAttached(_ seat: Int, now: NIODeadline) {
        switch consume self {
        case .puck(var runner):
            runner.seatAttached(seat)
            self = .puck(runner)
        case .other(var rules):
            rules.seatAttached(seat, now: Instant(now))
            self = .other(rules)
        case let other: self = other
        }
    }

    package mutating func seatLeft(_ seat: Int, now: NIODeadline, into out: inout MatchOutputs) {
        switch consume self {
        case .puck(var runner):
            runner.seatLeft(seat, into: &out)
            self = .puck(runner)
        case .snap(var runner):
            runner.seatLeft(seat, into: &out)
            self = .snap(runner)
        case .suns(var relay):
            relay.seatLeft(seat, into: &out)
            self = .suns(relay)
        case .other(var rules):
            rules.seatLeft(seat, now: Instant(now), into: &out)
            self = .other(rules)
        }
    }
}
