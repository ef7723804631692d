import SkirmishGames
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench games`: what the rules cost per step, the numbers the server and every bot pay per tick or turn.
package struct GamesBenchmark {
    package struct Configuration: Sendable {
        /// Operations timed per row (Snap rows play whole games until at least this many turns).
        package var iterations = 1_000_000

        package init(iterations: Int = 1_000_000) {
            self.iterations = iterations
        }
    }

    /// One operation's figures.
    package struct Row: Sendable, Equatable {
        package var operation: String
        package var measurement: Measurement

        package var line: String {
            pad(operation, 34) + pad(fixed(measurement.nanosecondsPerIteration), 10, left: true)
                + pad(fixed(measurement.perSecond, 0), 14, left: true)
                + pad(fixed(measurement.allocationsPerIteration, 4), 12, left: true)
        }
    }

    package struct Result: Sendable {
        package var iterations: Int
        /// Puck step, Puck server tick, Puck state hash, Puck replica apply, Snap turn, Snap turn + hash, Suns strike,
        /// Suns replica check (the other player's strike and its captures, as a receiver checks them).
        package var rows: [Row]

        package init(iterations: Int, rows: [Row]) {
            self.iterations = iterations
            self.rows = rows
        }

        private func nanoseconds(_ operation: String) -> Double {
            rows.first { $0.operation == operation }?.measurement.nanosecondsPerIteration ?? .nan
        }

        /// Puck matches one core steps at 60 Hz on the rules alone (a server tick per match per 1/60 s).
        package var puckMatchesPerCore: Double { 1e9 / nanoseconds(Self.serverTick) / 60 }
        /// Server tick ÷ bare step.
        package var serverTickRatio: Double { nanoseconds(Self.serverTick) / nanoseconds(Self.puckStep) }
        /// Snap turn with its state hash ÷ the turn alone.
        package var snapHashRatio: Double { nanoseconds(Self.snapTurnHash) / nanoseconds(Self.snapTurn) }

        package var lines: [String] {
            [
                "games: \(iterations) operations per row, one thread, release build expected",
                pad("operation", 34) + pad("ns/op", 10, left: true) + pad("ops/s", 14, left: true)
                    + pad("allocs/op", 12, left: true),
            ] + rows.map(\.line) + [
                "one core steps about \(fixed(puckMatchesPerCore, 0)) Puck matches at 60 Hz on rules alone "
                    + "(budget: ≥ 500 matches per core including the network)",
                "ratio: server tick / bare step = \(fixed(serverTickRatio, 2)); "
                    + "Snap turn + hash / turn = \(fixed(snapHashRatio, 2))",
            ]
        }

        package static let puckStep = "Puck step (one match tick)"
        package static let serverTick = "Puck server tick (step + snaps)"
        package static let snapTurn = "Snap turn"
        package static let snapTurnHash = "Snap turn + state hash"
    }

    private let iterations: Int
    private let environment: BenchEnvironment

    private init(iterations: Int, environment: BenchEnvironment) {
        self.iterations = iterations
        self.environment = environment
    }

    package static func run(_ configuration: Configuration, environment: BenchEnvironment) throws -> Result {
        try Measurement.checkAllocationCounter(environment)
        let bench = GamesBenchmark(iterations: configuration.iterations, environment: environment)
        let rows = [
            Row(operation: Result.puckStep, measurement: bench.puckSteps(withSnapshots: false)),
            Row(operation: Result.serverTick, measurement: bench.puckSteps(withSnapshots: true)),
            Row(operation: "Puck state hash", measurement: bench.puckHash()),
            Row(operation: "Puck replica apply snapshot", measurement: bench.puckReplicaApply()),
            Row(operation: Result.snapTurn, measurement: bench.snapTurns(hashing: false)),
            Row(operation: Result.snapTurnHash, measurement: bench.snapTurns(hashing: true)),
            Row(operation: "Suns strike", measurement: bench.sunsStrikes()),
            Row(operation: "Suns replica check strike + capture", measurement: bench.sunsReplicaChecks()),
        ]
        return Result(iterations: configuration.iterations, rows: rows)
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
        let measurement = Measurement.run(iterations: iterations, environment: environment) { i in
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
        let measurement = Measurement.run(iterations: iterations, environment: environment) { i in
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
        let measurement = Measurement.run(iterations: iterations, environment: environment) { _ in
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
        let measurement = Measurement.run(iterations: iterations, environment: environment) { _ in
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
        let measurement = Measurement.run(iterations: iterations, environment: environment) { i in
            if i % 64 == 0 { game = template }
            let strike = SunsStrike(
                x: Float(random.next() % 1_000) / 1_000, y: Float(random.next() % 1_000) / 1_000,
                radius: 0.05 + Float(random.next() % 250) / 1_000, gameTime: Float(i % 3_000) / 60)
            captures += game.strike(strike, by: i & 1).count
        }
        precondition(captures > 0, "no strike captured a sun")
        return measurement
    }

    /// The receiver's side of a Suns strike: apply the other player's strike and check the captures it makes (computed
    /// beforehand by the striker, outside the measurement). The honest path must allocate nothing.
    private func sunsReplicaChecks() -> Measurement {
        var random = SeededRandom(seed: 6)
        let suns = (0..<16).map { _ in
            SunsStart.Sun(x: Float(random.next() % 1_000) / 1_000, y: Float(random.next() % 1_000) / 1_000)
        }
        var striker = SunsGame(seat: 0)
        striker.propose(coinToss: 9, suns: suns)
        striker.receiveStart(SunsStart(coinToss: 3, suns: suns))
        var template = SunsReplica(seat: 1)
        template.game.propose(coinToss: 3, suns: suns)
        template.game.receiveStart(SunsStart(coinToss: 9, suns: suns))
        precondition(template.game.layout != nil, "the Suns layout was not adopted")
        // One race of 64 strikes, replayed: each iteration checks one strike and its captures.
        var race: [(SunsStrike, [SunsCapture])] = []
        for i in 0..<64 {
            let strike = SunsStrike(
                x: Float(random.next() % 1_000) / 1_000, y: Float(random.next() % 1_000) / 1_000,
                radius: 0.05 + Float(random.next() % 250) / 1_000, gameTime: Float(i) / 2)
            race.append((strike, striker.strike(strike, by: 0)))
        }
        precondition(race.contains { !$0.1.isEmpty }, "no strike captured a sun")
        // The copy of the template every 64 iterations is the only allocation (a few, amortised over the 64).
        var replica = template
        var failed = 0
        let measurement = Measurement.run(iterations: iterations, environment: environment) { i in
            if i % 64 == 0 { replica = template }
            let (strike, captures) = race[i % 64]
            if !replica.receive(strike).isOK { failed += 1 }
            for capture in captures where !replica.receive(capture).isOK { failed += 1 }
        }
        precondition(failed == 0, "an honest capture failed its check")
        return measurement
    }
}
