import Foundation
import SkirmishGames
import SkirmishWire
import Testing

@testable import SkirmishEvaluation

/// `skirmish ai-eval`'s method, without a server: the statistics it reports, how it books shots from the shot
/// machine's events, and how its report judges matches, the difficulty curve and the targets.
@Suite struct EvaluationTests {
    @Test(arguments: [
        (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (50, 100, 0.4038, 0.5962), (978, 1000, 0.9669, 0.9855),
    ])
    func wilsonIntervalsMatchTheTextbook(successes: Int, trials: Int, low: Double, high: Double) {
        let interval = Proportion(successes: successes, trials: trials).wilson95
        #expect(abs(interval.low - low) < 0.0005, "low \(interval.low)")
        #expect(abs(interval.high - high) < 0.0005, "high \(interval.high)")
    }

    @Test func anEmptyProportionClaimsNothing() {
        let empty = Proportion(successes: 0, trials: 0)
        #expect(empty.rate == 0)
        #expect(empty.wilson95 == (0, 1))
    }

    @Test func percentilesAreNearestRank() {
        var samples = Samples()
        #expect(samples.percentile(0.5) == nil && samples.mean == nil)
        for value in (1...100).reversed() { samples.add(Double(value)) }
        #expect(samples.percentile(0.5) == 50)
        #expect(samples.percentile(0.99) == 99)
        #expect(samples.percentile(1) == 100)
        #expect(samples.percentile(0) == 1)
        #expect(samples.mean == 50.5)
    }

    @Test func workIsSplitIntoNearEqualPositiveParts() {
        #expect(EvalPlan.split(10, into: 3) == [4, 3, 3])
        #expect(EvalPlan.split(2, into: 5) == [1, 1])
        #expect(EvalPlan.split(0, into: 3) == [0])
        #expect(EvalPlan.chunks(101, of: 50) == 3)
        #expect(EvalPlan.chunks(0, of: 50) == 1)
    }

    @Test func theProbeBooksShotsFromTypedEventsAndIgnoresOtherChat() {
        var probe = OpponentProbe(seat: 1, shotTarget: 2)
        let puck = TableSnapshot.Puck(x: 240, y: 200, vx: 1.5, vy: 9.25, angle: 0, spin: 0)
        probe.chat(ShotEvent.served(number: 1, tick: 100, puck: puck, bounces: 0).text)
        probe.chat("gg, well played")
        probe.chat("shot 1 saved extra")
        #expect(probe.completedShots == 0)
        probe.chat(ShotEvent.ended(number: 1, outcome: .returned, interceptError: 4.5, contactOffset: 2).text)
        probe.chat(ShotEvent.served(number: 2, tick: 400, puck: puck, bounces: 1).text)
        probe.chat(ShotEvent.ended(number: 2, outcome: .timeout, interceptError: nil, contactOffset: nil).text)
        // An ending for a shot never served changes nothing, and a shot ends once.
        probe.chat(ShotEvent.ended(number: 9, outcome: .stopped, interceptError: 1, contactOffset: 1).text)
        probe.chat(ShotEvent.ended(number: 2, outcome: .stopped, interceptError: 1, contactOffset: 1).text)
        #expect(probe.completedShots == 2)
        #expect(probe.isComplete)
        // A timeout is decided but is not a save.
        #expect(probe.shots.map(\.saved) == [true, false])
        #expect(probe.shots.map(\.outcome) == [.returned, .timeout])
        #expect(probe.shots.map(\.interceptError) == [4.5, nil])
        #expect(probe.shots.map(\.contactOffset) == [2, nil])
        #expect(probe.shots.map(\.bounces) == [0, 1])
    }

    @Test func matchesCountWinsDrawsAndLossesFromTheAIsSide() {
        func session(_ mine: Int, _ theirs: Int, completed: Bool = true) -> EvalRunner.MatchSession {
            EvalRunner.MatchSession(
                myScore: mine, theirScore: theirs, completed: completed, seconds: 60, probe: nil,
                decisionNanos: Samples(), lateNanos: Samples(), ended: "over")
        }
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addMatches(
            [session(7, 2), session(7, 5), session(3, 3, completed: false), session(1, 7)], rival: .noPrediction,
            latency: 150)
        let row = report.matches[0]
        #expect(row.wins == 2 && row.draws == 1 && row.losses == 1 && row.completed == 3)
        #expect(row.winRate == 0.625)
        #expect(row.goalsFor == 18 && row.goalsAgainst == 17)
        // The median time to 7 counts the match cut off by the time limit as longer than any: here the 2nd of 4.
        #expect(row.medianSecondsToSeven == 60)
        #expect(abs(row.winWilson95Low - 0.1500) < 0.0005 && abs(row.winWilson95High - 0.8500) < 0.0005)
        report.checkTargets()
        let target = report.targets.first { $0.name == "expert win rate vs no-prediction at 150 ms" }
        #expect(target?.met == false && target?.value == 0.625)
        let wilson = report.targets.first { $0.name.hasPrefix("expert wins vs no-prediction at 150 ms") }
        #expect(wilson?.met == false)
    }

    @Test("the human-like matrix gives each preset's goals both ways against each level and finds a bent curve")
    func theHumanMatrixReportsGoalsBothWays() {
        func session(_ mine: Int, _ theirs: Int) -> EvalRunner.MatchSession {
            EvalRunner.MatchSession(
                myScore: mine, theirScore: theirs, completed: true, seconds: 90, probe: nil, decisionNanos: Samples(),
                lateNanos: Samples(), ended: "over")
        }
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addHumanMatrix(
            [
                ("easy", [("beginner", [session(3, 7), session(7, 5)]), ("skilled", [session(1, 7)])]),
                // Harder, and it beats the skilled player; but it loses more to the beginner: not monotone there.
                ("hard", [("beginner", [session(2, 7), session(3, 7)]), ("skilled", [session(7, 6)])]),
            ], latency: 50)
        let humans = report.humans
        #expect(humans?.cells.map(\.difficulty) == ["easy", "easy", "hard", "hard"])
        #expect(humans?.cells.map(\.result.rival) == ["beginner", "skilled", "beginner", "skilled"])
        #expect(humans?.cells.first?.result.goalsFor == 10 && humans?.cells.first?.result.goalsAgainst == 12)
        #expect(humans?.monotoneAgainst == ["skilled"])
        let lines = report.tableLines().joined(separator: "\n")
        #expect(lines.contains("against human-like players at 50 ms"))
        #expect(
            lines.contains("win rate vs beginner monotone from easy to expert: 50.0 % → 0.0 % (NOT monotone)"),
            "\(lines)")
        // Two matches a cell are too few to judge: the bands say so, and nothing passes.
        #expect(lines.contains("too few matches to judge"))
        #expect(!lines.contains("PASS easy vs"))
        // The bands are lines of their own, not targets: they never change the exit status.
        report.checkTargets()
        #expect(!report.targets.contains { $0.name.contains("beginner") || $0.name.contains("skilled") })
    }

    /// 40 wins out of 40 clear every match target: the Wilson interval's low end passes 90 % and the median match
    /// reaches 7 within 3 minutes; one more row that reaches 7 in only a third of its matches misses the median.
    @Test func aPerfectRecordOfFortyMeetsTheMatchTargets() {
        func session(_ seconds: Double, completed: Bool = true) -> EvalRunner.MatchSession {
            EvalRunner.MatchSession(
                myScore: 7, theirScore: 1, completed: completed, seconds: seconds, probe: nil,
                decisionNanos: Samples(), lateNanos: Samples(), ended: "over")
        }
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addMatches((0..<40).map { session(Double(60 + $0)) }, rival: .chaser, latency: 0)
        report.addMatches(
            (0..<40).map { session(180, completed: $0 % 3 == 0) }, rival: .defender, latency: 0)
        report.checkTargets()
        let chaser = report.targets.filter { $0.name.contains("vs chaser at 0 ms") }
        #expect(chaser.count == 3 && chaser.allSatisfy(\.met), "\(chaser)")
        let slow = report.targets.first { $0.name == "median match time to 7 goals vs defender at 0 ms (s)" }
        #expect(slow?.met == false && slow?.value == nil)
    }

    /// The Kalman baseline's matches are the field's reference: in the table, never a PASS/MISS line.
    @Test func theKalmanBaselinesMatchesAreReportedButNotATarget() {
        let lost = EvalRunner.MatchSession(
            myScore: 0, theirScore: 7, completed: true, seconds: 90, probe: nil, decisionNanos: Samples(),
            lateNanos: Samples(), ended: "over")
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addMatches([lost, lost], rival: .kalman, latency: 50)
        report.addMatches([lost], rival: .noPrediction, latency: 50)
        report.checkTargets()
        #expect(report.matches.map(\.rival) == ["kalman", "no-prediction"])
        #expect(!report.targets.contains { $0.name.contains("kalman") }, "\(report.targets.map(\.name))")
        #expect(report.targets.filter { $0.name.contains("vs no-prediction at 50 ms") }.count == 3)
        #expect(report.tableLines().contains { $0.contains("kalman") && $0.contains("0-0-2") })
    }

    /// The headroom table says where no strike scored at all, and where every goal found came off the rival's own
    /// paddle, naming the cells.
    @Test func theHeadroomNamesWhereNoStrikeScoresCleanly() {
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.headroom = [
            AttackHeadroom.Row(
                latencyMs: 0, rival: "defender", moments: 50, aiScored: 0, open: 0, strikes: 16_800, scoringStrikes: 0),
            AttackHeadroom.Row(
                latencyMs: 50, rival: "no-prediction", moments: 40, aiScored: 3, aiScoredClean: 0, open: 12,
                cleanOpen: 0, strikes: 13_440, scoringStrikes: 90, cleanStrikes: 0),
            AttackHeadroom.Row(
                latencyMs: 50, rival: "kalman", moments: 45, aiScored: 2, aiScoredClean: 0, open: 0, cleanOpen: 0,
                strikes: 15_120, scoringStrikes: 0, cleanStrikes: 0),
            AttackHeadroom.Row(
                latencyMs: 150, rival: "chaser", moments: 30, aiScored: 9, aiScoredClean: 4, open: 20, cleanOpen: 11,
                strikes: 10_080, scoringStrikes: 900, cleanStrikes: 300),
        ]
        let lines = report.headroomLines()
        let none = lines.filter { $0.hasPrefix("not one strike tried") }
        #expect(none.count == 1 && none[0].contains("defender at 0 ms") && !none[0].contains("no-prediction"))
        let unclean = lines.filter { $0.hasPrefix("no strike went in untouched") }
        // Only the AI's own play scored against the Kalman baseline, off its paddle: named too.
        #expect(unclean.count == 1)
        #expect(unclean.first.map { $0.contains("no-prediction at 50 ms") && $0.contains("kalman at 50 ms") } == true)
        #expect(unclean.first?.contains("chaser") == false)
        let chaser = lines.first { $0.contains("chaser") && !$0.hasPrefix("no ") }
        #expect(chaser?.contains("2.98 %") == true, "\(lines)")
    }

    /// The win-rate curve must not fall from easy to expert.
    @Test func theWinCurveIsMonotoneOnlyWhenNoHarderPresetWinsLess() {
        func sessions(won: Int, of count: Int) -> [EvalRunner.MatchSession] {
            (0..<count).map { index in
                EvalRunner.MatchSession(
                    myScore: index < won ? 7 : 2, theirScore: index < won ? 2 : 7, completed: true, seconds: 90,
                    probe: nil, decisionNanos: Samples(), lateNanos: Samples(), ended: "over")
            }
        }
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addWinCurve(
            [
                ("easy", sessions(won: 1, of: 4)), ("medium", sessions(won: 1, of: 4)),
                ("hard", sessions(won: 3, of: 4)),
                ("expert", sessions(won: 4, of: 4)),
            ], rival: .chaser, latency: 150)
        #expect(report.winCurve?.monotone == true)
        report.addWinCurve(
            [
                ("easy", sessions(won: 2, of: 4)), ("medium", sessions(won: 1, of: 4)),
                ("hard", sessions(won: 3, of: 4)),
                ("expert", sessions(won: 4, of: 4)),
            ], rival: .chaser, latency: 150)
        #expect(report.winCurve?.monotone == false)
        report.checkTargets()
        #expect(report.targets.contains { $0.name.hasPrefix("difficulty curve monotone in win rate") && !$0.met })
        #expect(report.tableLines().contains { $0.contains("NOT monotone in win rate") })
    }
}
