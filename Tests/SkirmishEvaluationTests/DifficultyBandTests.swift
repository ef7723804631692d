import SkirmishGames
import SkirmishOpponent
import SkirmishWire
import Testing

@testable import SkirmishEvaluation

/// The difficulty bands of `ai-eval`'s human-like matrix and the adaptive AI's lines: what passes, what misses, and
/// what is too little to judge.
@Suite struct DifficultyBandTests {
    /// `wins` matches won `win` and the rest lost `loss` (scores as AI–player), out of `count`.
    static func sessions(_ count: Int, wins: Int, win: (Int, Int) = (7, 3), loss: (Int, Int) = (4, 7))
        -> [EvalRunner.MatchSession]
    {
        (0..<count).map { index in
            let (mine, theirs) = index < wins ? win : loss
            return EvalRunner.MatchSession(
                myScore: mine, theirScore: theirs, completed: true, seconds: 90, probe: nil, decisionNanos: Samples(),
                lateNanos: Samples(), ended: "over")
        }
    }

    /// A matrix in which every cell lies in its band, with `count` matches a cell; `easyVsCasual` overrides one
    /// cell.
    static func matrix(count: Int, easyVsCasual: [EvalRunner.MatchSession]? = nil) -> [(
        String, [(String, [EvalRunner.MatchSession])]
    )] {
        let half = count / 2
        let cells: [String: [String: [EvalRunner.MatchSession]]] = [
            "easy": [
                "beginner": sessions(count, wins: half),
                "casual": easyVsCasual ?? sessions(count, wins: 0, loss: (3, 7)),
                "skilled": sessions(count, wins: 0, loss: (2, 7)),
            ],
            "medium": [
                "beginner": sessions(count, wins: count), "casual": sessions(count, wins: half),
                "skilled": sessions(count, wins: 0, loss: (3, 7)),
            ],
            "hard": [
                "beginner": sessions(count, wins: count), "casual": sessions(count, wins: count),
                "skilled": sessions(count, wins: half),
            ],
            "expert": [
                "beginner": sessions(count, wins: count), "casual": sessions(count, wins: count),
                "skilled": sessions(count, wins: count),
            ],
        ]
        return Opponent.Difficulty.allCases.map { preset in
            (
                preset.rawValue,
                HumanPlayer.Skill.allCases.map { level in
                    (level.rawValue, cells[preset.rawValue]?[level.rawValue] ?? [])
                }
            )
        }
    }

    @Test("the table has one band for every preset and level")
    func everyCellHasABand() {
        for difficulty in Opponent.Difficulty.allCases {
            for level in HumanPlayer.Skill.allCases {
                #expect(DifficultyBand.band(difficulty, level) != nil, "\(difficulty) vs \(level)")
            }
        }
        #expect(DifficultyBand.all.count == 12)
    }

    @Test("cells inside their bands pass, with every figure and its interval on the line")
    func cellsInsideTheirBandsPass() throws {
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addHumanMatrix(Self.matrix(count: 40), latency: 50)
        let humans = try #require(report.humans)
        #expect(humans.bands.count == 12)
        #expect(humans.bands.allSatisfy { $0.verdict == .pass }, "\(humans.bands.filter { $0.verdict != .pass })")
        #expect(humans.monotone.map(\.verdict) == [.pass, .pass, .pass])
        let lines = report.tableLines()
        let easyCasual = try #require(lines.first { $0.contains("easy vs casual") })
        #expect(easyCasual.hasPrefix("PASS"))
        #expect(easyCasual.contains("win rate 0.0 %") && easyCasual.contains("band ≤ 25 %"), "\(easyCasual)")
        #expect(easyCasual.contains("AI goals/match 3.00 (95 % 3.00–3.00; band 2–5)"), "\(easyCasual)")
        let expertSkilled = try #require(lines.first { $0.contains("expert vs skilled") })
        #expect(expertSkilled.contains("player goals/match 3.00") && expertSkilled.contains("band 1–5"))
        #expect(lines.contains { $0.hasPrefix("PASS") && $0.contains("win rate vs beginner monotone") })
    }

    @Test("a point estimate outside its band misses, and a harder preset winning less bends the curve")
    func aFigureOutsideItsBandMisses() throws {
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        // Easy loses every match to the casual player 1–7: it wins no more than its band allows, but scores too
        // little; and it beats the casual player more often than medium does? No: it wins none, so only the goals
        // miss.
        report.addHumanMatrix(
            Self.matrix(count: 40, easyVsCasual: Self.sessions(40, wins: 0, loss: (1, 7))), latency: 50)
        let band = try #require(report.humans?.bands.first { $0.difficulty == "easy" && $0.level == "casual" })
        #expect(band.verdict == .miss)
        #expect(band.figures.map(\.inside) == [true, false])
        let line = try #require(report.tableLines().first { $0.contains("easy vs casual") })
        #expect(line.hasPrefix("MISS") && line.contains("AI goals/match 1.00") && line.contains("OUT"), "\(line)")
        // Easy now beats the casual player more often than medium does: not monotone against casual.
        var bent = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        bent.addHumanMatrix(Self.matrix(count: 40, easyVsCasual: Self.sessions(40, wins: 30)), latency: 50)
        let casual = try #require(bent.humans?.monotone.first { $0.level == "casual" })
        #expect(casual.verdict == .miss)
        #expect(bent.tableLines().contains { $0.hasPrefix("MISS") && $0.contains("win rate vs casual monotone") })
    }

    @Test("fewer than 40 matches a cell are reported as too few to judge, never as a PASS")
    func fewMatchesAreNotJudged() {
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addHumanMatrix(Self.matrix(count: 4), latency: 50)
        #expect(report.humans?.bands.allSatisfy { $0.verdict == .tooFew } == true)
        #expect(report.humans?.monotone.allSatisfy { $0.verdict == .tooFew } == true)
        let lines = report.tableLines().filter { $0.contains(" vs ") && $0.contains("matches") }
        #expect(!lines.isEmpty)
        #expect(!lines.contains { $0.hasPrefix("PASS") })
        #expect(lines.filter { $0.contains("too few matches to judge") }.count >= 12)
    }

    /// A controller that saw `order` goals one a second (`true`: the AI conceded).
    static func controller(_ order: [Bool]) -> AdaptiveDifficulty {
        var controller = AdaptiveDifficulty()
        var score = (mine: UInt8(0), theirs: UInt8(0))
        var tick: UInt32 = 0
        for conceded in order {
            if conceded { score.theirs += 1 } else { score.mine += 1 }
            for _ in 0..<30 {
                tick += 2
                let snapshot = TableSnapshot(
                    tick: tick, lastInputStep: 0, me: .init(x: 160, y: 430, vx: 0, vy: 0),
                    them: .init(x: 160, y: 50, vx: 0, vy: 0),
                    puck: .init(x: 160, y: 240, vx: 0, vy: 0, angle: 0, spin: 0), myScore: score.mine,
                    theirScore: score.theirs, phase: .playing, stateHash: 0)
                controller.observe(snapshot, at: Instant(seconds: Double(tick) / 60))
            }
        }
        return controller
    }

    @Test("the adaptive AI passes within ±2 goals and with 80 % of its matches converged")
    func theAdaptiveLines() throws {
        let settled = Self.controller([true, false, true, false, true, false, true, false, true, false, true])
        let runaway = Self.controller([true, false, true] + Array(repeating: true, count: 12))
        #expect(settled.convergence?.converged == true && runaway.convergence?.converged == false)
        func sessions(converged: Int, scores: (Int, Int)) -> [EvalRunner.MatchSession] {
            (0..<40).map { index in
                var session = EvalRunner.MatchSession(
                    myScore: index % 2 == 0 ? scores.0 : scores.1, theirScore: index % 2 == 0 ? scores.1 : scores.0,
                    completed: true, seconds: 90, probe: nil, decisionNanos: Samples(), lateNanos: Samples(),
                    ended: "over")
                session.controller = index < converged ? settled : runaway
                return session
            }
        }
        var report = EvalReport(difficulty: "expert", seed: 1, matchSeconds: 180)
        report.addHumanMatrix(Self.matrix(count: 40), latency: 50)
        report.addAdaptive([
            ("beginner", sessions(converged: 32, scores: (7, 5))),
            ("casual", sessions(converged: 31, scores: (7, 5))),
            // 7–1 and 5–7 in turn: the AI is ahead by 2.5 goals a match on average.
            (
                "skilled",
                (0..<40).map { index in
                    var session = sessions(converged: 40, scores: (7, 5))[index]
                    if index % 2 == 0 { (session.myScore, session.theirScore) = (7, 0) }
                    return session
                }
            ),
        ])
        let rows = try #require(report.humans?.adaptive)
        #expect(rows.map(\.goalVerdict) == [.pass, .pass, .miss])
        #expect(rows.map(\.convergenceVerdict) == [.pass, .miss, .pass])
        #expect(rows[0].converged == 32 && rows[0].judged == 40)
        #expect(abs(rows[2].goalDifference.value - 2.5) < 1e-9)
        let lines = report.tableLines()
        #expect(lines.contains { $0.hasPrefix("PASS") && $0.contains("adaptive vs beginner, 40 matches") })
        #expect(lines.contains { $0.hasPrefix("MISS") && $0.contains("adaptive vs casual converged") })
        #expect(lines.contains { $0.contains("adaptive") && $0.contains("skilled") && $0.contains("+2.50") })
    }
}
