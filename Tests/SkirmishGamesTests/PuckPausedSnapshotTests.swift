import SkirmishGames
import SkirmishWire
import Testing

/// Snapshots the reference rules take without a step — the match paused for a dropped player — may acknowledge an
/// input the next step has yet to use (GameRules.md, "The step"). The replica must not take that input for one the
/// snapshot's tick already used.
///
/// The false desync a puck-ladder rerun reported (part `paddles`, the bot's paddle 0.278 px off with velocity −0.278
/// against 0) was this: the rival's bot left during the ramp-down without its `Disconnect` arriving, the server
/// paused the match on a tick without a snapshot, and the pause's first snapshot, at that same tick, named the input
/// that arrived just after its step.
@Suite struct PuckPausedSnapshotTests {
    /// The reference rules, as the server runs them, with the snapshots each tick sends to `seat`.
    struct Table {
        var runner = PuckRunner(resumeWindowTicks: 900)

        init() {
            runner.seatFilled(0)
            runner.seatFilled(1)
        }

        /// One server tick; the snapshots it sent to `seat`.
        mutating func tick(for seat: Int) -> [TableSnapshot] {
            var out = MatchOutputs()
            runner.tick(into: &out)
            return out.messages.compactMap { output in
                guard output.seat == seat, case .tableSnapshot(let snapshot) = output.message else { return nil }
                return snapshot
            }
        }

        mutating func send(_ input: PaddleState, from seat: Int, to replica: inout PuckReplica) {
            replica.sent(input)
            #expect(runner.receive(.paddleState(input), from: seat) == .accepted)
        }
    }

    /// The exact sequence of the ladder's desync, from either seat (the rival, in the other seat, drops).
    @Test(arguments: [0, 1])
    func aPausedSnapshotNamingAPendingInputIsNoDesync(seat: Int) throws {
        var table = Table()
        var replica = PuckReplica(seat: seat)
        // Server tick 1 starts the match and steps it to tick 1; tick 2 sends the first snapshot (tick 2, no input).
        #expect(table.tick(for: seat).isEmpty)
        for snapshot in table.tick(for: seat) { #expect(replica.apply(snapshot) == .ok) }
        // Input 1 (60 px to the left, own frame) is used by the steps of ticks 3 and 4: the paddle arrives and rests.
        table.send(PaddleState(inputStep: 1, x: 100, y: 400, vx: 0, vy: 0), from: seat, to: &replica)
        #expect(table.tick(for: seat).isEmpty)
        let arrived = table.tick(for: seat)
        #expect(arrived.map(\.lastInputStep) == [1])
        for snapshot in arrived { #expect(replica.apply(snapshot) == .ok) }
        // Tick 5 is stepped (no snapshot on this server tick): the paddle stays on input 1's target.
        #expect(table.tick(for: seat).isEmpty)
        // Input 2 (0.278 px further) arrives after that step; then the rival drops: the match pauses at tick 5.
        let nudged = Float(100) - 0.278
        table.send(PaddleState(inputStep: 2, x: nudged, y: 400, vx: 0, vy: 0), from: seat, to: &replica)
        table.runner.seatDetached(1 - seat)
        let paused = try #require(table.tick(for: seat).first)
        #expect(paused.tick == 5)
        #expect(paused.lastInputStep == 2)
        #expect(paused.me.x == 100 && paused.me.vx == 0)
        let compared = replica.compared.paddles
        #expect(replica.apply(paused) == .ok, "\(String(describing: replica.divergence))")
        #expect(replica.compared.paddles == compared + 1, "the paused snapshot's paddle is still compared")
        // The rival resumes; the first step after the pause uses input 2, and the next snapshot checks out too.
        table.runner.seatAttached(1 - seat)
        #expect(table.tick(for: seat).isEmpty)
        let resumed = try #require(table.tick(for: seat).first)
        #expect(resumed.tick == 7)
        #expect(resumed.me.x < 100, "input 2 moved the paddle after the pause")
        #expect(replica.apply(resumed) == .ok, "\(String(describing: replica.divergence))")
        #expect(replica.compared.paddles == compared + 2)
    }

    /// The same interval, with the paddle one quantum off in the paused snapshot (its hash recomputed): still a
    /// desync, so widening the candidates to pending inputs did not blind the check.
    @Test func aDriftedPaddleInAPausedSnapshotIsStillFlagged() throws {
        var table = Table()
        var replica = PuckReplica(seat: 0)
        _ = table.tick(for: 0)
        for snapshot in table.tick(for: 0) { #expect(replica.apply(snapshot) == .ok) }
        table.send(PaddleState(inputStep: 1, x: 100, y: 400, vx: 0, vy: 0), from: 0, to: &replica)
        _ = table.tick(for: 0)
        for snapshot in table.tick(for: 0) { #expect(replica.apply(snapshot) == .ok) }
        _ = table.tick(for: 0)
        table.send(PaddleState(inputStep: 2, x: 100 - 0.278, y: 400, vx: 0, vy: 0), from: 0, to: &replica)
        table.runner.seatDetached(1)
        var paused = try #require(table.tick(for: 0).first)
        paused.me.x = paused.me.x + PuckConstants.quantum
        paused.stateHash = PuckMatch(snapshot: paused, seat: 0).stateHash
        #expect(replica.apply(paused) == .desync(part: "paddles"))
    }

    /// Whole matches of the reference rules against both replicas, in continuous time: inputs at 30 Hz on each bot's
    /// own phase, a link of 40 ± 20 ms with 3 % loss each way, and now and then a seat that drops and comes back a
    /// few ticks later. No snapshot may be flagged, and the paddles must be compared throughout.
    @Test func theReferenceRulesWithDroppedPlayersAreNeverFlagged() {
        var compared = 0
        var pauses = 0
        for seed in 1...24 as ClosedRange<UInt64> {
            let outcome = Self.play(seed: seed &* 6_007)
            #expect(outcome.desyncs.isEmpty, "seed \(seed): \(outcome.desyncs)")
            compared += outcome.compared
            pauses += outcome.pauses
        }
        #expect(compared > 20_000)
        #expect(pauses > 100)
    }

    struct Outcome {
        var desyncs: [String] = []
        var compared = 0
        var pauses = 0
    }

    /// One match of at most 60 s; times in microseconds.
    static func play(seed: UInt64) -> Outcome {
        struct Flight<T> {
            var arrival: Int
            var order: Int
            var seat: Int
            var item: T
        }
        var rng = SeededRandom(seed: seed)
        func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        var table = Table()
        var replicas = [PuckReplica(seat: 0), PuckReplica(seat: 1)]
        var steps: [UInt32] = [0, 0]
        let period = 1_000_000 / 30
        var nextInput = [below(period), below(period)]
        var toServer: [Flight<PaddleState>] = []
        var toClient: [Flight<TableSnapshot>] = []
        var order = 0
        var tick = 0
        var away: (seat: Int, until: Int)?
        var outcome = Outcome()
        func delay() -> Int { 40_000 + below(40_001) - 20_000 }
        func earliest<T>(_ flights: [Flight<T>]) -> Int? {
            flights.indices.min { (flights[$0].arrival, flights[$0].order) < (flights[$1].arrival, flights[$1].order) }
        }
        while !table.runner.isOver {
            let tickAt = (tick + 1) * 1_000_000 / 60
            let inputAt = min(nextInput[0], nextInput[1])
            let serverAt = earliest(toServer).map { toServer[$0].arrival } ?? .max
            let clientAt = earliest(toClient).map { toClient[$0].arrival } ?? .max
            let now = min(tickAt, inputAt, serverAt, clientAt)
            guard now <= 60_000_000 else { break }
            if now == serverAt, let i = earliest(toServer) {
                let flight = toServer.remove(at: i)
                // A dropped player's packets do not reach its seat.
                if away?.seat != flight.seat { _ = table.runner.receive(.paddleState(flight.item), from: flight.seat) }
            } else if now == clientAt, let i = earliest(toClient) {
                let flight = toClient.remove(at: i)
                if case .desync = replicas[flight.seat].apply(flight.item) {
                    outcome.desyncs.append("\(String(describing: replicas[flight.seat].divergence))")
                }
            } else if now == inputAt {
                let seat = nextInput[0] == now ? 0 : 1
                nextInput[seat] += period
                steps[seat] &+= 1
                // Chase the puck where it will be, as the `chaser` does, from the replica's own view.
                let puck = replicas[seat].predictPuck(ticks: 2)
                let target =
                    puck.y >= 215
                    ? PuckTarget(x: puck.x + (puck.x < 160 ? 8 : -8), y: min(puck.y + 25, 440))
                    : PuckTarget(x: 160 + (puck.x - 160) * 0.5, y: 400)
                let input = PaddleState(inputStep: steps[seat], x: target.x, y: target.y, vx: 0, vy: 0)
                replicas[seat].sent(input)
                if below(100) >= 3 {
                    order += 1
                    toServer.append(Flight(arrival: now + delay(), order: order, seat: seat, item: input))
                }
            } else {
                tick += 1
                if let gone = away, tick >= gone.until {
                    table.runner.seatAttached(gone.seat)
                    away = nil
                } else if away == nil, below(240) == 0 {
                    let seat = below(2)
                    table.runner.seatDetached(seat)
                    away = (seat, tick + 2 + below(60))
                    outcome.pauses += 1
                }
                var out = MatchOutputs()
                table.runner.tick(into: &out)
                for output in out.messages where output.seat != away?.seat {
                    guard case .tableSnapshot(let snapshot) = output.message, below(100) >= 3 else { continue }
                    order += 1
                    toClient.append(Flight(arrival: now + delay(), order: order, seat: output.seat, item: snapshot))
                }
            }
        }
        outcome.compared = replicas[0].compared.paddles + replicas[1].compared.paddles
        return outcome
    }
}
