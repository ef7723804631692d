import SkirmishOpponent
import Testing

@testable import SkirmishEvaluation

/// What `skirmish ai-eval` reads from its options, and the plan a quick run plays.
@Suite struct EvalPlanOptionTests {
    @Test func latenciesAreMillisecondsSeparatedByCommas() throws {
        #expect(try EvalPlan.parseLatencies("0,50, 100 ,2000") == [0, 50, 100, 2_000])
        #expect(
            throws: EvalPlan.OptionError(
                description: "--latencies takes one-way latencies in ms between 0 and 2000, separated by commas "
                    + "(like 0,50,150); `2001` is not one.")
        ) { try EvalPlan.parseLatencies("0,2001") }
        #expect(throws: EvalPlan.OptionError.self) { try EvalPlan.parseLatencies("fast") }
        #expect(
            throws: EvalPlan.OptionError(description: "--latencies names no latency; try 0,50,100,150,250.")
        ) { try EvalPlan.parseLatencies(",") }
    }

    @Test func difficultyIsAPreset() throws {
        #expect(try EvalPlan.parseDifficulty("hard") == .hard)
        #expect(
            throws: EvalPlan.OptionError(
                description: "--difficulty must be one of easy, medium, hard, expert; got `brutal`.")
        ) { try EvalPlan.parseDifficulty("brutal") }
        // The adaptive AI is a choice elsewhere; here the error says where it is measured instead.
        let error = #expect(throws: EvalPlan.OptionError.self) { try EvalPlan.parseDifficulty("adaptive") }
        #expect(error?.description.contains("--human-matches") == true)
    }

    @Test func aQuickRunCapsEverySample() {
        var plan = EvalPlan(
            shots: 1_000, matches: 6, matchSeconds: 120, latencies: [0, 150], difficulty: .expert, curveShots: 400,
            curveLatency: 150, sessions: 40, parallel: 30, seed: 1, curveMatches: 10)
        plan.shrinkToQuickRun()
        #expect((plan.shots, plan.matches, plan.curveShots, plan.matchSeconds) == (200, 2, 200, 60))
        #expect(plan.curveMatches == 2)
        var small = plan
        small.shots = 50
        small.matchSeconds = 30
        small.shrinkToQuickRun()
        #expect((small.shots, small.matchSeconds) == (50, 30))
        // 200 shots × 2 latencies × (AI, no prediction, Kalman) + 200 for the still paddle + 200 × 4 presets;
        // 2 matches × 4 rivals (chaser, defender, no prediction, Kalman) × 2 latencies + 2 × 4 presets.
        #expect(
            plan.progressLine(shots: 12, matches: 3, elapsedSeconds: 8) == "ai-eval: 12/2200 shots, 3/24 matches, 8 s")
        // The headroom's seconds of play: 30 s for each of 4 rivals at 2 latencies.
        plan.headroomSeconds = 30
        #expect(
            plan.progressLine(shots: 2200, matches: 24, headroomSeconds: 75, elapsedSeconds: 90)
                == "ai-eval: 2200/2200 shots, 24/24 matches, headroom 75/240 s of play, 90 s")
        #expect(EvalRunner.Rival.scripted.count == 4)
        // The human-like players: each preset and the adaptive AI against each of 3 levels, capped at 2 matches by
        // a quick run.
        plan.humanMatches = 5
        plan.shrinkToQuickRun()
        #expect(plan.humanMatches == 2)
        #expect(plan.totalMatches == 24 + 2 * 5 * 3)
        // --adaptive-only: the adaptive AI's matches alone.
        plan.humanPresets = false
        #expect(plan.totalMatches == 24 + 2 * 1 * 3)
        #expect(EvalRunner.Rival.humans.compactMap(\.skill) == HumanPlayer.Skill.allCases)
    }
}
