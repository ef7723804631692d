import SkirmishGames
import SkirmishOpponent
import SkirmishTestSupport
import SkirmishWire
import Testing

/// An opponent that remembers every input it sent, for checks on what it commands.
struct Recording: PuckAgent {
    var opponent: Opponent
    var sent: [(time: Instant, input: PaddleState)] = []

    mutating func observe(_ snapshot: TableSnapshot, at time: Instant) { opponent.observe(snapshot, at: time) }

    mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {
        opponent.observeRoundTrip(roundTrip, at: time)
    }

    mutating func act(now: Instant) -> PaddleState? {
        let input = opponent.decide(now: now)
        sent.append((now, input))
        return input
    }
}

/// What the opponent promises whatever it plays: its own half, its speed cap, the same decisions for the same
/// inputs, and a predictor that reproduces the server.
@Suite(.ownThread) struct OpponentContractTests {
    @Test(arguments: Opponent.Difficulty.allCases)
    func neverCommandsOutsideItsHalfNorFasterThanItsCap(difficulty: Opponent.Difficulty) {
        let configuration = OpponentConfiguration(difficulty: difficulty)
        var table = LockstepTable(
            bottom: Recording(opponent: Opponent(seat: 0, configuration: configuration, seed: 3)),
            top: Recording(opponent: Opponent(seat: 1, configuration: OpponentConfiguration(difficulty: .expert))),
            bottomLink: .init(latency: 0.08, jitter: 0.02, loss: 0.02),
            topLink: .init(latency: 0.03, jitter: 0.01, loss: 0.02), seed: 5)
        table.play(limit: 60 * 40)
        for recording in [table.bottom, table.top] {
            let cap = recording.opponent.configuration.speedCap
            // The expert may win the match to 7 well before the 40 s are up: hundreds of inputs are still checked.
            #expect(recording.sent.count > 500)
            var previous: (time: Instant, input: PaddleState)?
            for (time, input) in recording.sent {
                #expect((40...280).contains(input.x) && (280...440).contains(input.y), "\(input)")
                if let previous {
                    let dx = input.x - previous.input.x
                    let dy = input.y - previous.input.y
                    let ticks = Float(min((time.seconds - previous.time.seconds) * 60, 3))
                    #expect((dx * dx + dy * dy).squareRoot() <= cap * ticks + 0.01, "\(previous.input) → \(input)")
                }
                previous = (time, input)
            }
        }
    }

    @Test func theSameInputsGiveTheSameMatch() {
        func play() -> (UInt32, [PaddleState]) {
            var table = LockstepTable(
                bottom: Recording(opponent: Opponent(seat: 0, configuration: .init(difficulty: .hard), seed: 9)),
                top: Recording(opponent: Opponent(seat: 1, configuration: .init(difficulty: .medium), seed: 10)),
                bottomLink: .init(latency: 0.1, jitter: 0.03, loss: 0.05),
                topLink: .init(latency: 0.05, jitter: 0.01, loss: 0.05), seed: 11)
            table.play(limit: 60 * 20)
            return (table.match.stateHash, table.bottom.sent.map(\.input))
        }
        let first = play()
        let second = play()
        #expect(first.0 == second.0)
        #expect(first.1 == second.1)
    }

    /// From an exact snapshot, with nobody near the puck, the predictor's puck is the server's bit for bit.
    @Test(arguments: [0, 1])
    func predictorReproducesTheServerForAFreePuck(seat: Int) {
        var match = PuckMatch()
        match.start()
        match.serve(
            TableSnapshot.Puck(x: 70, y: 150, vx: 9.5, vy: 6.25, angle: 0, spin: 0), resettingScore: false)
        let snapshot = match.snapshot(for: seat, lastInputStep: 0)
        let opponent = Opponent(seat: seat)
        var server = match
        for ticks in 1...40 {
            _ = server.step(nil, nil)
            let truth = server.snapshot(for: seat, lastInputStep: 0).puck
            let predicted = opponent.predictPuck(from: snapshot, ticks: ticks)
            #expect(predicted == truth, "tick \(ticks)")
        }
    }

    /// The server's tick clock, mapped onto the local clock from snapshot arrivals and pings, is within a tick or so
    /// of the truth under jitter: the lookahead of a decision is the snapshot's age plus the way back, plus a tick.
    @Test func latencyEstimatesMapTheServersTickClock() throws {
        var opponent = Opponent(seat: 0, configuration: OpponentConfiguration(difficulty: .expert))
        var random = SeededRandom(seed: 4)
        var match = PuckMatch()
        match.start()
        let oneWay = 0.1
        let epoch = 1_000.0
        for step in 0..<600 {
            _ = match.step(nil, nil)
            guard step % 2 == 1 else { continue }
            let sent = epoch + Double(match.tick) / 60
            let arrival = sent + oneWay + Double.random(in: -0.02...0.02, using: &random)
            opponent.observe(match.snapshot(for: 0, lastInputStep: 0), at: Instant(seconds: arrival))
            if step % 12 == 1 {
                let roundTrip = 2 * oneWay + Double.random(in: -0.04...0.04, using: &random)
                opponent.observeRoundTrip(Duration(seconds: roundTrip), at: Instant(seconds: arrival))
            }
        }
        let latest = try #require(opponent.latestSnapshot)
        let now = epoch + Double(latest.tick) / 60 + 0.15
        _ = opponent.decide(now: Instant(seconds: now))
        // Server tick now ≈ latest + 9 (0.15 s); the input lands ≈ 6 ticks later and acts the tick after.
        #expect(abs(opponent.plan.lookahead - 16) <= 2, "lookahead \(opponent.plan.lookahead)")
        #expect(abs(opponent.latency.roundTrip - 2 * oneWay) < 0.02)
        #expect(opponent.latency.jitter > 0.005 && opponent.latency.jitter < 0.04)
        #expect(opponent.latency.samples == 50)
    }

    @Test func staleAndDuplicateSnapshotsAreIgnored() {
        var match = PuckMatch()
        match.start()
        for _ in 0..<10 { _ = match.step(nil, nil) }
        let newer = match.snapshot(for: 0, lastInputStep: 0)
        var opponent = Opponent(seat: 0)
        opponent.observe(newer, at: Instant(seconds: 1))
        var older = newer
        older.tick -= 2
        opponent.observe(older, at: Instant(seconds: 2))
        opponent.observe(newer, at: Instant(seconds: 3))
        #expect(opponent.latestSnapshot == newer)
    }
}

/// The kick-off (three seconds at the start and after every goal) is a wait for the AI too: it goes back to its
/// start spot and plans no strike once it has seen the pause begin, while more of it is left than it looks ahead.
@Suite(.ownThread) struct KickOffTests {
    @Test(arguments: Opponent.Difficulty.allCases)
    func theAIPlansNoStrikeDuringAKickOff(difficulty: Opponent.Difficulty) {
        let configuration = OpponentConfiguration(difficulty: difficulty)
        var table = LockstepTable(
            bottom: Recording(opponent: Opponent(seat: 0, configuration: configuration, seed: 4)),
            top: Recording(opponent: Opponent(seat: 1, configuration: OpponentConfiguration(difficulty: .medium))),
            bottomLink: .init(latency: 0.05), topLink: .init(latency: 0.05), seed: 6)
        var pauseTicksSeen = 0
        var pausesWatched = 0
        var watching = false
        while table.ticks < 60 * 60, table.match.phase != .over {
            table.step()
            let ai = table.bottom.opponent
            // Past its reaction delay after the pause began, and with more of it left than the link's lookahead.
            let reacted = Float(PuckConstants.goalPauseTicks) - Float(configuration.reactionDelay * 60) - 12
            guard let seen = ai.latestSnapshot, seen.phase == .goalPause, seen.puck.angle > 30,
                seen.puck.angle < reacted
            else {
                watching = false
                continue
            }
            if !watching { pausesWatched += 1 }
            watching = true
            pauseTicksSeen += 1
            #expect(ai.plan.mode == .waiting, "tick \(table.ticks): \(ai.plan.mode) during a kick-off")
        }
        // The first kick-off and at least one after a goal were watched.
        #expect(pausesWatched >= 2, "\(pausesWatched) kick-offs watched")
        #expect(pauseTicksSeen > 2 * 60)
    }
}
