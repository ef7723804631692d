import SkirmishGames
import SkirmishOpponent
import SkirmishWire
import Testing

@testable import SkirmishServer
@testable import SkirmishSwarm

/// The `ai` behaviour: the opponent against the swarm's own `chaser`, and AI personas in a real swarm run.
@Suite(.serialized) struct AIBehaviorTests {
    /// Lock-step matches (pure simulation over a simulated 50 ms link) of the expert against the chaser bot's very
    /// aim and input rhythm.
    @Test func expertBeatsTheChaser() {
        var wins = 0
        var goalsFor = 0
        var goalsAgainst = 0
        for index in 0..<4 {
            let seed = 500 + UInt64(index)
            var table = LockstepTable(
                bottom: Opponent(seat: 0, configuration: OpponentConfiguration(difficulty: .expert), seed: seed),
                top: ScriptedPuckAgent(style: .chaser, seat: 1, inputRate: 30, seed: seed),
                bottomLink: .init(latency: 0.05, jitter: 0.01, loss: 0.01),
                topLink: .init(latency: 0.05, jitter: 0.01, loss: 0.01), seed: seed)
            table.play(limit: 60 * 90)
            let (mine, theirs) = table.match.scores
            goalsFor += Int(mine)
            goalsAgainst += Int(theirs)
            if mine > theirs { wins += 1 }
        }
        #expect(wins >= 3, "won \(wins) of 4, goals \(goalsFor)-\(goalsAgainst)")
        #expect(goalsFor > 2 * goalsAgainst, "goals \(goalsFor)-\(goalsAgainst)")
    }

    static let aiScript = """
        name: ai
        profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 7s}}]
        personas:
          - {name: expert, weight: 1, game: puck, behavior: ai, difficulty: expert, input_rate: 60hz, link: {latency: 30ms, jitter: 5ms}}
          - {name: easy, weight: 1, game: puck, behavior: ai, difficulty: easy, input_rate: 60hz}
        thresholds: {desyncs: "== 0"}
        """

    /// AI bots play real matches through the swarm: no desync, and their predictions are measured.
    @Test func aiPersonasPlayAndMeasureTheirPredictions() async throws {
        let run = try await SwarmRunTests.run(Self.aiScript, seconds: 8)
        #expect(run.summary.desyncs == 0)
        #expect(run.summary.matchesStarted >= 2, "errors \(run.summary.errors), handshakes \(run.summary.handshakes)")
        // Two matches of 30 Hz snapshots for several seconds: dozens of predictions even on a loaded machine.
        #expect(run.summary.predictionErrorPixels.count > 30)
        // The expert's link jitters, so a few of its unreliable packets arrive behind a newer one: the server counts
        // those as stale (issue 19: every drop is counted). Nothing else is refused.
        #expect(run.server.totalRejected - run.server.rejections(.stale) - run.server.rejections(.duplicate) == 0)
    }
}
