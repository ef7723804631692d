import SkirmishGames
import SkirmishOpponent
import SkirmishTestSupport
import SkirmishWire
import Testing

/// The claims about prediction, in lock-step simulations over simulated links (no sockets, no clock;
/// `skirmish ai-eval` measures the same over the real protocol).
@Suite(.ownThread) struct PredictionTests {
    @Test func interceptErrorAt100MillisecondsWithoutABounceIsBelowOnePuckRadiusAtP95() {
        let run = ShotRun.run(
            OpponentConfiguration(difficulty: .expert), link: .init(latency: 0.1, jitter: 0.02, loss: 0.02),
            shots: 120, bounces: 0, seed: 21)
        #expect(run.interceptErrors.count >= 110)
        #expect(run.percentile(0.95) < PuckConstants.puckRadius, "p95 \(run.percentile(0.95)) px")
        #expect(run.saveRate >= 0.9)
    }

    /// Without prediction the crossing is guessed from where the puck was: the same check fails, so it can fail.
    @Test func withoutPredictionTheInterceptErrorIsLarge() {
        let blind = OpponentConfiguration(difficulty: .expert).withoutPrediction
        let run = ShotRun.run(
            blind, link: .init(latency: 0.1, jitter: 0.02, loss: 0.02), shots: 60, bounces: 0, seed: 21)
        #expect(run.percentile(0.95) > 2 * PuckConstants.puckRadius)
    }

    @Test func theAIWithPredictionBeatsItselfWithoutAt150Milliseconds() {
        let blind = OpponentConfiguration(difficulty: .expert).withoutPrediction
        let run = MatchRun.run(
            OpponentConfiguration(difficulty: .expert),
            against: { index in Opponent(seat: 1, configuration: blind, seed: 100 + UInt64(index)) },
            link: .init(latency: 0.15, jitter: 0.03, loss: 0.02), matches: 6, ticks: 60 * 90, seed: 31)
        #expect(run.wins > run.losses, "\(run)")
        #expect(run.wins >= 4, "\(run)")
        #expect(run.goalsFor > 2 * run.goalsAgainst, "\(run)")
    }

    @Test func easyLosesMoreThanExpertAgainstTheSameOpponent() {
        let link = LockstepTable<Opponent, Opponent>.Link(latency: 0.05, jitter: 0.01, loss: 0.01)
        func against(_ difficulty: Opponent.Difficulty) -> MatchRun {
            MatchRun.run(
                OpponentConfiguration(difficulty: difficulty),
                against: { index in
                    Opponent(
                        seat: 1, configuration: OpponentConfiguration(difficulty: .medium), seed: 200 + UInt64(index))
                }, link: link, matches: 4, ticks: 60 * 90, seed: 41)
        }
        let easy = against(.easy)
        let expert = against(.expert)
        #expect(easy.losses > expert.losses, "easy \(easy), expert \(expert)")
        #expect(easy.goalsAgainst > expert.goalsAgainst, "easy \(easy), expert \(expert)")
    }
}
