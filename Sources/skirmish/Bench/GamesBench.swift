import ArgumentParser
import SkirmishGames
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench games`: what the rules cost per step, the numbers the server and every bot pay per tick or turn.
struct GamesBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "games",
        abstract: "Time a Puck tick, a Snap turn and a Suns strike, and count heap allocations per operation.",
        discussion: """
            Puck: two scripted paddles chase the puck so it is hit, bounces and scores; a finished match restarts \
            (that restart is inside the timed loop). "server tick" is what the reference server pays per match \
            per tick: one step, plus every 2nd tick a snapshot with its state hash for each seat. "replica apply" \
            is what a bot pays per snapshot: rebuild the table from it and check its hash.

            Snap: whole seeded 2–4 seat games (a fresh copy of a dealt table each, which allocates its piles once); \
            players turn in order and a quarter of the pairs are called. Figures are per turn, and "turn + hash" \
            adds the state hash the server sends in every CardTurned.

            Suns: strikes of radius 0.05–0.3 at random points of an adopted 5-sun layout.

            Single-threaded and bounded: each row runs --iterations operations after a warm-up of a tenth as many.
            """
    )

    @Option(help: "Operations timed per row (Snap rows play whole games until at least this many turns).")
    var iterations = 1_000_000

    func validate() throws {
        guard iterations >= 1_000 else {
            throw ValidationError("--iterations must be at least 1000 for a stable figure, got \(iterations)")
        }
    }

    func run() throws {
        try Measurement.checkAllocationCounter()
        print("games: \(iterations) operations per row, one thread, release build expected")
        print(
            pad("operation", 34) + pad("ns/op", 10, left: true) + pad("ops/s", 14, left: true)
                + pad("allocs/op", 12, left: true))
        var rows: [(String, Measurement)] = []
        rows.append(("Puck step (one match tick)", puckSteps(withSnapshots: false)))
        rows.append(("Puck server tick (step + snaps)", puckSteps(withSnapshots: true)))
        rows.append(("Puck state hash", puckHash()))
        rows.append(("Puck replica apply snapshot", puckReplicaApply()))
        rows.append(("Snap turn", snapTurns(hashing: false)))
        rows.append(("Snap turn + state hash", snapTurns(hashing: true)))
        rows.append(("Suns strike", sunsStrikes()))
        for (name, measurement) in rows {
            let perSecond = 1e9 / measurement.nanosecondsPerIteration
            print(
                pad(name, 34) + pad(fixed(measurement.nanosecondsPerIteration), 10, left: true)
                    + pad(fixed(perSecond, 0), 14, left: true)
                    + pad(fixed(measurement.allocationsPerIteration, 4), 12, left: true))
        }
        let tick = rows[1].1.nanosecondsPerIteration
        print(
            "one core steps about \(fixed(1e9 / tick / 60, 0)) Puck matches at 60 Hz on rules alone "
                + "(budget: ≥ 500 matches per core including the network)")
        print(
            "ratio: server tick / bare step = \(fixed(tick / rows[0].1.nanosecondsPerIteration, 2)); "
                + "Snap turn + hash / turn = \(fixed(rows[5].1.nanosecondsPerIteration / rows[4].1.nanosecondsPerIteration, 2))"
        )
    }

    /// Targets that make a lively match (the striker of the server tests): wind up behind a slow puck in its own
    /// half, then drive through it toward the far goal; otherwise guard the middle of its goal.
    private static func chase(_ match: PuckMatch, seat: Int, tick: Int) -> PuckTarget {
        let puck = PuckMatch.view(x: match.puck.x, y: match.puck.y, seat: seat)
        let speed = abs(match.puck.vx) + abs(match.puck.vy)
        if puck.y >= 215 {
            let windingUp = ((tick + seat * 7) / 24) % 2 == 0
            if speed < 1.5, windingUp { return PuckTarget(x: puck.x, y: min(puck.y + 100, 440)) }
            return PuckTarget(x: puck.x + (puck.x < 160 ? 8 : -8), y: min(puck.y + 25, 440))
        }
        return PuckTarget(x: 160 + (puck.x - 160) * 0.5, y: 400)
    }

    private func puckSteps(withSnapshots: Bool) -> Measurement {
        var match = PuckMatch()
        match.start()
        var checksum: UInt32 = 0
        var goals = 0
        let measurement = Measurement.run(iterations: iterations) { i in
            let events = match.step(Self.chase(match, seat: 0, tick: i), Self.chase(match, seat: 1, tick: i))
            if events.goal != nil { goals += 1 }
            if withSnapshots, i & 1 == 0 || events.goal != nil {
                checksum &+= match.snapshot(for: 0, lastInputStep: UInt32(truncatingIfNeeded: i)).stateHash
                checksum &+= match.snapshot(for: 1, lastInputStep: UInt32(truncatingIfNeeded: i)).stateHash
            }
            if match.phase == .over {
                match = PuckMatch()
                match.start()
            }
        }
        precondition(goals > 0, "the scripted paddles never scored: the Puck row would time a resting puck")
        blackHole(checksum)
        return measurement
    }

    private func puckHash() -> Measurement {
        var match = PuckMatch()
        match.start()
        var tables: [PuckMatch] = []
        for i in 0..<64 {
            _ = match.step(Self.chase(match, seat: 0, tick: i), Self.chase(match, seat: 1, tick: i))
            tables.append(match)
        }
        var checksum: UInt32 = 0
        let measurement = Measurement.run(iterations: iterations) { i in
            checksum &+= tables[i & 63].stateHash
        }
        blackHole(checksum)
        return measurement
    }

    private func puckReplicaApply() -> Measurement {
        var match = PuckMatch()
        match.start()
        var snapshots: [TableSnapshot] = []
        for i in 0..<4_096 {
            _ = match.step(Self.chase(match, seat: 0, tick: i), Self.chase(match, seat: 1, tick: i))
            if match.phase == .over { break }
            snapshots.append(match.snapshot(for: i & 1, lastInputStep: UInt32(i)))
        }
        let seat0 = snapshots.enumerated().filter { $0.offset & 1 == 0 }.map(\.element)
        var replica = PuckReplica(seat: 0)
        var desyncs = 0
        var next = 0
        let measurement = Measurement.run(iterations: iterations) { _ in
            if next == seat0.count {
                replica = PuckReplica(seat: 0)
                next = 0
            }
            if case .desync = replica.apply(seat0[next]) { desyncs += 1 }
            next += 1
        }
        precondition(desyncs == 0, "a replica disagreed with the server's own snapshots")
        return measurement
    }

    private func snapTurns(hashing: Bool) -> Measurement {
        var random = SeededRandom(seed: 11)
        let tables = (0..<64).map { SnapGame(seats: 2 + $0 % 3, seed: UInt64($0) &* 0x9E37_79B9) }
        var turns = 0
        var checksum: UInt32 = 0
        var game = 0
        var state = tables[0]
        let measurement = Measurement.run(iterations: iterations) { _ in
            if state.winner != nil {
                game &+= 1
                state = tables[game & 63]
            }
            _ = try? state.turnCard(by: state.turn)
            turns += 1
            if hashing { checksum &+= state.stateHash }
            if state.hasPair, random.next() % 4 == 0 { _ = try? state.callSnap(by: Int(random.next() % 2)) }
        }
        precondition(turns > iterations, "no turns were taken")
        blackHole(checksum)
        return measurement
    }

    private func sunsStrikes() -> Measurement {
        var random = SeededRandom(seed: 5)
        let suns = (0..<5).map { _ in
            SunsStart.Sun(x: Float(random.next() % 1_000) / 1_000, y: Float(random.next() % 1_000) / 1_000)
        }
        var template = SunsGame(seat: 0)
        template.propose(coinToss: 9, suns: suns)
        template.receiveStart(SunsStart(coinToss: 3, suns: suns))
        precondition(template.layout != nil, "the Suns layout was not adopted")
        var game = template
        var captures = 0
        let measurement = Measurement.run(iterations: iterations) { i in
            if i % 64 == 0 { game = template }
            let strike = SunsStrike(
                x: Float(random.next() % 1_000) / 1_000, y: Float(random.next() % 1_000) / 1_000,
                radius: 0.05 + Float(random.next() % 250) / 1_000)
            captures += game.strike(strike, by: i & 1, at: Float(i % 3_000) / 60).count
        }
        precondition(captures > 0, "no strike captured a sun")
        return measurement
    }
}

/// Keeps a computed value alive so the optimiser cannot drop the loop that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
