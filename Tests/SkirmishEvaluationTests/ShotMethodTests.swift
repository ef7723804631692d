import SkirmishGames
import SkirmishOpponent
import SkirmishWire
import Testing

@testable import SkirmishEvaluation

/// The shot side of `skirmish ai-eval`, without a server: what a save is, how hard the shot set is, the
/// session-clustered intervals, which shots the baselines share, and the PASS/MISS lines.
@Suite struct ShotMethodTests {
    // MARK: Intervals

    @Test func allSavesGiveTheIntervalOneToOne() {
        let sessions = Array(repeating: ClusterBootstrap.Cluster(successes: 50, trials: 50), count: 20)
        let interval = ClusterBootstrap(seed: 3).interval(sessions)
        #expect(interval.rate == 1 && interval.low == 1 && interval.high == 1)
    }

    @Test func sessionsThatDisagreeWidenTheIntervalBeyondPooledWilson() {
        // 750/1000 either way; in the second run half the sessions save everything and half save half.
        let even = Array(repeating: ClusterBootstrap.Cluster(successes: 75, trials: 100), count: 10)
        let split =
            Array(repeating: ClusterBootstrap.Cluster(successes: 50, trials: 50), count: 10)
            + Array(repeating: ClusterBootstrap.Cluster(successes: 25, trials: 50), count: 10)
        let wilson = Proportion(successes: 750, trials: 1_000).wilson95
        let bootstrap = ClusterBootstrap(seed: 9)
        let clustered = bootstrap.interval(split)
        #expect(clustered.rate == 0.75)
        #expect(clustered.low < wilson.low - 0.03 && clustered.high > wilson.high + 0.03, "\(clustered) vs \(wilson)")
        // Identical sessions carry no spread between them: the interval collapses to the rate.
        let same = bootstrap.interval(even)
        #expect(same.low == 0.75 && same.high == 0.75)
    }

    @Test func theBootstrapIsDeterministicForASeed() {
        let sessions = (0..<12).map { ClusterBootstrap.Cluster(successes: 30 + $0 * 2, trials: 50) }
        let a = ClusterBootstrap(seed: 5).interval(sessions)
        let b = ClusterBootstrap(seed: 5).interval(sessions)
        let c = ClusterBootstrap(seed: 6).interval(sessions)
        #expect(a == b)
        #expect(a.low <= a.rate && a.rate <= a.high)
        #expect(a.low != c.low || a.high != c.high)
    }

    @Test func fewSessionsAreNeverNarrowerThanWilson() {
        let three = [40, 41, 39].map { ClusterBootstrap.Cluster(successes: $0, trials: 50) }
        let interval = ClusterBootstrap(seed: 2).interval(three)
        let wilson = Proportion(successes: 120, trials: 150).wilson95
        #expect(interval.low <= wilson.low && interval.high >= wilson.high)
    }

    @Test func oneSessionFallsBackToWilson() {
        let one = ClusterBootstrap().interval([ClusterBootstrap.Cluster(successes: 40, trials: 50)])
        let wilson = Proportion(successes: 40, trials: 50).wilson95
        #expect(one.low == wilson.low && one.high == wilson.high)
        #expect(ClusterBootstrap().interval([]) == (0, 0, 1))
    }

    // MARK: What a save is

    /// Serves `puck` (defender's frame) at seat 1 and steps the real match, seat 1 driven by `defender`.
    private func judge(
        _ puck: TableSnapshot.Puck, paddleAt start: PuckTarget, defender: (Int) -> PuckTarget
    ) -> (ShotReferee.Outcome, ShotReferee) {
        var match = PuckMatch()
        match.start()
        for _ in 0..<30 { _ = match.step(nil, start) }
        match.serve(PuckShot(puck: puck, bounces: 0).canonical(defender: 1), resettingScore: true)
        var referee = ShotReferee(served: match.puck, defender: 1)
        for tick in 1...400 {
            let events = match.step(nil, defender(tick))
            if let outcome = referee.observe(match, events: events) { return (outcome, referee) }
        }
        Issue.record("the referee never decided")
        return (.timeout, referee)
    }

    @Test func aShotPastThePaddleIsAGoalWithItsMissDistance() {
        let away = PuckTarget(x: 270, y: 300)
        let (outcome, referee) = judge(
            TableSnapshot.Puck(x: 90, y: 150, vx: 0, vy: 12, angle: 0, spin: 0), paddleAt: away
        ) { _ in away }
        #expect(outcome == .goal)
        #expect(!referee.touched && referee.contactOffset == nil)
        // Paddle (270, 300) to the puck crossing the defence line at x = 90.
        let dy = ShotReferee.defenceLine - 300
        let expected = (180 * 180 + dy * dy).squareRoot()
        let error = referee.interceptError ?? 0
        #expect(abs(error - expected) < 8, "\(error), expected about \(expected)")
    }

    @Test func aPaddleOnThePathScoresNoErrorAndStopsTheShot() {
        let spot = PuckTarget(x: 160, y: ShotReferee.defenceLine)
        let (outcome, referee) = judge(
            TableSnapshot.Puck(x: 160, y: 150, vx: 0, vy: 9, angle: 0, spin: 0), paddleAt: spot
        ) { _ in spot }
        #expect(referee.touched)
        #expect(outcome == .stopped)
        #expect((referee.interceptError ?? 99) < 15)
        // Met through its centre.
        #expect(referee.contactOffset == 0)
    }

    @Test func aStrikeThatSendsThePuckBackIsReturned() {
        let (outcome, referee) = judge(
            TableSnapshot.Puck(x: 160, y: 250, vx: 0, vy: 4, angle: 0, spin: 0), paddleAt: PuckTarget(x: 160, y: 420)
        ) { tick in tick < 3 ? PuckTarget(x: 160, y: 420) : PuckTarget(x: 160, y: 280) }
        #expect(outcome == .returned)
        #expect(referee.touched)
        #expect(referee.contactOffset == 0)
    }

    @Test func aPuckLeftWanderingIsATimeoutNotASave() {
        let away = PuckTarget(x: 60, y: 440)
        let (outcome, referee) = judge(
            TableSnapshot.Puck(x: 160, y: 200, vx: 6, vy: 0, angle: 0, spin: 0), paddleAt: away
        ) { _ in away }
        #expect(outcome == .timeout && !outcome.isSave)
        #expect(referee.ticks == ShotReferee.timeoutTicks)
    }

    /// The issue's acceptance test for the shot set: simulated without a socket on the real physics, a paddle
    /// standing still at the AI's home spot saves at most 15 % of the corner shots — it never even touches one, and
    /// every shot passes the shooter's idle paddle into the goal — and every shot is one a hit can make (no faster
    /// than 15 px/tick) that still arrives as a shot, and no sooner than a defender across 150 ms can answer.
    @Test func theStillPaddleSavesAtMostFifteenPercentOfTheShotSet() {
        var match = PuckMatch()
        match.start()
        let still = PuckTarget(x: StillPaddle.spot.x, y: StillPaddle.spot.y)
        var random = SeededRandom(seed: 2_024)
        var saves = 0
        var touched = 0
        var banked = 0
        var outcomes: [ShotReferee.Outcome: Int] = [:]
        let count = 600
        for index in 0..<count {
            for _ in 0..<20 { _ = match.step(nil, still) }
            let shot = PuckShot.corner(banked: index % 2 == 1, using: &random)
            let empty = PuckPath(following: shot.puck, defender: 0, line: PuckConstants.height, maxTicks: 300)
            #expect(empty.scores, "shot \(index) misses an empty goal")
            let speed = (shot.puck.vx * shot.puck.vx + shot.puck.vy * shot.puck.vy).squareRoot()
            #expect(speed <= PuckConstants.hitSpeed.upperBound + 0.001, "shot \(index) is faster than any hit")
            #expect((empty.goalSpeed ?? 0) >= PuckShot.cornerArrival, "shot \(index) rolls in")
            let line = PuckPath(following: shot.puck, defender: 0, line: ShotReferee.defenceLine, maxTicks: 300)
            #expect(
                (line.crossingTicks ?? 0) >= PuckShot.cornerFlightTicks,
                "shot \(index) reaches the defence line in \(line.crossingTicks ?? 0) ticks")
            if shot.bounces == 1 { banked += 1 }
            match.serve(shot.canonical(defender: 1), resettingScore: true)
            var referee = ShotReferee(served: match.puck, defender: 1)
            var outcome: ShotReferee.Outcome?
            while outcome == nil {
                let events = match.step(nil, still)
                outcome = referee.observe(match, events: events)
            }
            outcomes[outcome!, default: 0] += 1
            if outcome!.isSave { saves += 1 }
            if referee.touched { touched += 1 }
        }
        let rate = Double(saves) / Double(count)
        #expect(rate <= 0.15, "still paddle saved \(saves)/\(count): \(outcomes)")
        #expect(touched == 0, "the still paddle touched \(touched) shots")
        // The shooter's idle paddle stays at its start spot: a shot that grazed it would not arrive, and time out.
        #expect(outcomes[.goal] == count, "\(outcomes)")
        #expect(banked == count / 2, "\(banked) of \(count) shots banked")
    }

    /// The reach ceiling: a paddle that can act from `delay` ticks after the serve (moving on that tick) at 40 px/tick
    /// reaches a crossing within 20 px by the crossing tick, or not.
    @Test func reachIsWhetherAnyPaddleCanBeThereInTime() throws {
        #expect(PuckShot.answerDelay(latency: 0) == 3)
        #expect(PuckShot.answerDelay(latency: 0.15) == 21)
        let line = ShotReferee.defenceLine
        // Straight down the middle: the keeper spot is within 20 px of the crossing, so no travel is needed.
        let middle = TableSnapshot.Puck(x: 160, y: 100, vx: 0, vy: 12, angle: 0, spin: 0)
        let ticks = try #require(
            PuckPath(following: middle, defender: 0, line: line, maxTicks: 300).crossingTicks)
        #expect(PuckShot.reachable(middle, line: line, from: PuckShot.keeperSpot, delay: ticks + 1))
        #expect(!PuckShot.reachable(middle, line: line, from: PuckShot.keeperSpot, delay: ticks + 2))
        // Down the left side, 81 px from the keeper: the 61 px beyond the 20 px slack take two ticks.
        let side = TableSnapshot.Puck(x: 80, y: 100, vx: 0, vy: 12, angle: 0, spin: 0)
        #expect(PuckShot.reachable(side, line: line, from: PuckShot.keeperSpot, delay: ticks - 1))
        #expect(!PuckShot.reachable(side, line: line, from: PuckShot.keeperSpot, delay: ticks))
        // A puck going away never crosses: not reachable.
        let away = TableSnapshot.Puck(x: 160, y: 300, vx: 0, vy: -12, angle: 0, spin: 0)
        #expect(!PuckShot.reachable(away, line: line, from: PuckShot.keeperSpot, delay: 1))
    }

    // MARK: Report

    /// A shot session whose shots ended as `outcomes`, every intercept error `error`.
    private func session(series: Int, _ outcomes: [ShotReferee.Outcome], error: Float = 5) -> EvalRunner.ShotSession {
        var probe = OpponentProbe(seat: 1, shotTarget: outcomes.count)
        let puck = TableSnapshot.Puck(x: 100, y: 100, vx: 0, vy: 10, angle: 0, spin: 0)
        for (index, outcome) in outcomes.enumerated() {
            let number = UInt32(index + 1)
            probe.chat(ShotEvent.served(number: number, tick: number * 100, puck: puck, bounces: index % 3).text)
            probe.chat(
                ShotEvent.ended(number: number, outcome: outcome, interceptError: error, contactOffset: error / 2).text)
        }
        return EvalRunner.ShotSession(
            series: series, probe: probe, decisionNanos: Samples(), lateNanos: Samples(), ended: "done")
    }

    private func sessions(
        _ count: Int, saves: Int, of shots: Int, error: Float = 5
    ) -> [EvalRunner.ShotSession] {
        (0..<count).map { series in
            session(
                series: series,
                (0..<shots).map {
                    $0 < saves ? ($0 % 2 == 0 ? .stopped : .returned) : ($0 % 2 == 0 ? .goal : .timeout)
                },
                error: error)
        }
    }

    @Test func baselinesAreCountedOnTheAIsOwnShotsOnly() {
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 60)
        // The AI finished 2 sessions of 10; the still paddle played 4 sessions of 20, saving only its shots 11–20.
        let ai = sessions(2, saves: 10, of: 10)
        let still = (0..<4).map { series in
            session(series: series, (0..<20).map { $0 < 10 ? .goal : .stopped })
        }
        report.addShots(
            ai, latency: 150,
            baselines: ShotBaselines(still: still, noPrediction: sessions(2, saves: 5, of: 10), kalman: []))
        let row = report.shots[0]
        #expect(row.bounces == "all" && row.ai.shots == 20 && row.ai.saveRate == 1)
        #expect(row.stillPaddle.shots == 20 && row.stillPaddle.saved == 0)
        #expect(row.noPrediction.saveRate == 0.5)
        #expect(row.kalman.shots == 0)
        #expect(row.stopped == 10 && row.returned == 10 && row.goals == 0 && row.timeouts == 0)
    }

    @Test func theTargetsPassOnlyWhenEveryShotFigureIsMet() {
        func report(saves: Int, error: Float, still stillSaves: Int, monotone: Bool) -> EvalReport {
            var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 60)
            report.addShots(
                sessions(20, saves: saves, of: 50, error: error), latency: 150,
                baselines: ShotBaselines(
                    still: sessions(20, saves: stillSaves, of: 50), noPrediction: [], kalman: []))
            let levels = monotone ? [10, 20, 30, 40] : [10, 30, 20, 40]
            report.addCurve(
                zip(["easy", "medium", "hard", "expert"], levels).map { ($0, sessions(4, saves: $1, of: 50)) },
                latency: 150, still: sessions(4, saves: stillSaves, of: 50))
            report.checkTargets()
            return report
        }
        func met(_ report: EvalReport) -> [String: Bool] {
            Dictionary(uniqueKeysWithValues: report.targets.map { ($0.name, $0.met) })
        }
        let good = met(report(saves: 48, error: 12, still: 5, monotone: true))
        #expect(good["expert save rate at 150 ms"] == true)
        #expect(good["expert physical intercept error p95 at 150 ms (px)"] == true)
        #expect(good["difficulty curve monotone in saves at 150 ms"] == true)
        #expect(good["still paddle save rate (the shot set is hard enough)"] == true)
        let bad = met(report(saves: 47, error: 20, still: 8, monotone: false))
        // 47/50 = 94 % < 95 %; an error of exactly 20 px is not under 20; 16 % is too easy a shot set.
        #expect(bad["expert save rate at 150 ms"] == false)
        #expect(bad["expert physical intercept error p95 at 150 ms (px)"] == false)
        #expect(bad["difficulty curve monotone in saves at 150 ms"] == false)
        #expect(bad["still paddle save rate (the shot set is hard enough)"] == false)
        let lines = report(saves: 48, error: 12, still: 5, monotone: true).tableLines()
        #expect(lines.contains { $0.hasPrefix("expert 150 ms: saves 96.0 % [") && $0.contains("still paddle 10.0 %") })
        #expect(lines.contains { $0.contains("session-clustered") })
    }

    @Test func everyRowSharesItsShotSeriesWithItsBaselines() {
        var plan = EvalPlan(
            shots: 120, matches: 0, matchSeconds: 60, latencies: [0, 150], difficulty: .expert, curveShots: 160,
            curveLatency: 150, sessions: 4, parallel: 1, seed: 1)
        plan.predicts = false
        let jobs = plan.shotJobs(configuration: OpponentConfiguration(difficulty: .expert))
        #expect(jobs.map(\.shots).reduce(0, +) == plan.totalShots)
        let still = jobs.filter { $0.kind == .still }
        // Rows of 120 split 40/40/40 and the curve's 160 as 40 × 4: the still paddle covers every series.
        #expect(still.map(\.series).sorted() == [0, 1, 2, 3])
        for job in jobs where job.kind != .still {
            let cover = still.first { $0.series == job.series }
            #expect(cover.map { $0.shots >= job.shots } == true)
        }
        #expect(jobs.filter { $0.kind == .noPrediction }.allSatisfy { $0.defender != .kalman })
        #expect(jobs.filter { $0.kind == .kalman }.allSatisfy { $0.defender == .kalman })
    }
}
