import SkirmishGames
import SkirmishWire

/// The authoritative Puck match and two agents in lock-step over simulated links: for tests and quick experiments.
///
/// Pure and seeded. Ticks are the clock: server tick t happens at t / 60 s, and each agent acts once per tick at its
/// own fixed phase within the tick. Each link delays every packet by its one-way latency ± uniform jitter and drops a
/// fraction of them, independently per direction. The server side does what the reference server's Puck runner does:
/// the newest input (by step) that has arrived is applied at the next step, snapshots go out every second tick and
/// on goal ticks, and Pings are answered at once. `skirmish ai-eval` measures the same things over real sockets.
///
/// The table keeps its clock in `Double` seconds (tick t is t / 60 s, the links' delays are drawn in seconds) and
/// hands the agents the nearest `Instant` and `Duration`.
package struct LockstepTable<Bottom: PuckAgent, Top: PuckAgent>: Sendable {
    /// One side's network, applied in both directions.
    package struct Link: Sendable, Hashable {
        /// One-way delay, seconds.
        package var latency: Double
        /// Uniform spread around the latency, seconds.
        package var jitter: Double
        /// Probability a packet is dropped.
        package var loss: Double

        package init(latency: Double = 0, jitter: Double = 0, loss: Double = 0) {
            self.latency = latency
            self.jitter = jitter
            self.loss = loss
        }
    }

    private enum Delivery: Sendable {
        case snapshot(TableSnapshot)
        case roundTrip(Double)
    }

    private struct InFlight<Payload: Sendable>: Sendable {
        var arrival: Double
        var payload: Payload
    }

    /// The server's table (canonical frame); tests may serve shots on it between steps.
    package var match = PuckMatch()
    /// Seat 0's agent.
    package var bottom: Bottom
    /// Seat 1's agent.
    package var top: Top
    package let bottomLink: Link
    package let topLink: Link
    /// Server ticks run so far.
    package private(set) var ticks = 0
    /// The newest input step the server applied, per seat.
    package private(set) var lastInputStep: [UInt32] = [0, 0]

    private var random: SeededRandom
    private var toServer: [[InFlight<PaddleState>]] = [[], []]
    private var toClient: [[InFlight<Delivery>]] = [[], []]
    private var pending: [PuckTarget?] = [nil, nil]
    private let phase: [Double]
    private var nextPing: [Double] = [0, 0]

    package init(bottom: Bottom, top: Top, bottomLink: Link, topLink: Link, seed: UInt64) {
        self.bottom = bottom
        self.top = top
        self.bottomLink = bottomLink
        self.topLink = topLink
        var random = SeededRandom(seed: seed)
        phase = [Double.random(in: 0.05..<0.95, using: &random), Double.random(in: 0.05..<0.95, using: &random)]
        self.random = random
        match.start()
    }

    /// The seconds of server tick `tick`.
    package static func time(ofTick tick: Int) -> Double { Double(tick) / Double(PuckConstants.tickRate) }

    /// One server tick, then each agent's turn within it. Returns what the match did.
    @discardableResult
    package mutating func step() -> PuckEvents {
        ticks += 1
        let now = Self.time(ofTick: ticks)
        for seat in 0..<2 { receiveInputs(seat: seat, upTo: now) }
        let events = match.step(pending[0], pending[1])
        pending = [nil, nil]
        if ticks % PuckConstants.snapshotEvery == 0 || events.goal != nil || events.winner != nil {
            for seat in 0..<2 {
                send(.snapshot(match.snapshot(for: seat, lastInputStep: lastInputStep[seat])), to: seat, at: now)
            }
        }
        turn(seat: 0, at: now + phase[0] / Double(PuckConstants.tickRate))
        turn(seat: 1, at: now + phase[1] / Double(PuckConstants.tickRate))
        return events
    }

    /// Steps until the match is over or `limit` ticks have run.
    package mutating func play(limit: Int) {
        var left = limit
        while left > 0, match.phase != .over {
            step()
            left -= 1
        }
    }

    /// Serves `shot` at the seat `defender` and steps until the server's ``SkirmishGames/ShotReferee`` decides it,
    /// as the reference server's shot machine does: the referee judges the table after each step. `each` sees the
    /// referee and the table after every step (the last one included).
    package mutating func shoot(
        _ shot: PuckShot, at defender: Int, each: (ShotReferee, PuckMatch) -> Void = { _, _ in }
    ) -> (outcome: ShotReferee.Outcome, referee: ShotReferee) {
        match.serve(shot.canonical(defender: defender), resettingScore: true)
        var referee = ShotReferee(served: match.puck, defender: defender)
        while true {
            let events = step()
            let outcome = referee.observe(match, events: events)
            each(referee, match)
            if let outcome { return (outcome, referee) }
        }
    }

    private func link(_ seat: Int) -> Link { seat == 0 ? bottomLink : topLink }

    /// The delay of one packet on `seat`'s link, or nil when it is lost.
    private mutating func delay(_ seat: Int) -> Double? {
        let l = link(seat)
        if l.loss > 0, Double.random(in: 0..<1, using: &random) < l.loss { return nil }
        let spread = l.jitter > 0 ? Double.random(in: -l.jitter...l.jitter, using: &random) : 0
        return max(l.latency + spread, 0)
    }

    private mutating func send(_ delivery: Delivery, to seat: Int, at time: Double) {
        guard let d = delay(seat) else { return }
        toClient[seat].append(InFlight(arrival: time + d, payload: delivery))
    }

    private mutating func receiveInputs(seat: Int, upTo now: Double) {
        toServer[seat].sort { $0.arrival < $1.arrival }
        while let first = toServer[seat].first, first.arrival <= now {
            toServer[seat].removeFirst()
            let input = first.payload
            if lastInputStep[seat] != 0, !SerialNumber.follows(input.inputStep, lastInputStep[seat]) { continue }
            lastInputStep[seat] = input.inputStep
            pending[seat] = PuckTarget(input)
        }
    }

    private mutating func turn(seat: Int, at now: Double) {
        toClient[seat].sort { $0.arrival < $1.arrival }
        while let first = toClient[seat].first, first.arrival <= now {
            toClient[seat].removeFirst()
            switch first.payload {
            case .snapshot(let snapshot):
                let arrival = Instant(seconds: first.arrival)
                if seat == 0 {
                    bottom.observe(snapshot, at: arrival)
                } else {
                    top.observe(snapshot, at: arrival)
                }
            case .roundTrip(let rtt):
                let (rtt, arrival) = (Duration(seconds: rtt), Instant(seconds: first.arrival))
                if seat == 0 {
                    bottom.observeRoundTrip(rtt, at: arrival)
                } else {
                    top.observeRoundTrip(rtt, at: arrival)
                }
            }
        }
        if now >= nextPing[seat] {
            nextPing[seat] = now + Opponent.pingInterval.seconds
            if let up = delay(seat), let down = delay(seat) {
                toClient[seat].append(InFlight(arrival: now + up + down, payload: .roundTrip(up + down)))
            }
        }
        let input = seat == 0 ? bottom.act(now: Instant(seconds: now)) : top.act(now: Instant(seconds: now))
        if let input, let d = delay(seat) { toServer[seat].append(InFlight(arrival: now + d, payload: input)) }
    }
}
