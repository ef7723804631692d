import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// The `human` behaviour: SkirmishOpponent's human-like player in a bot, at each skill, against the real server.
@Suite struct HumanBehaviorTests {
    @Test("human-like bots of every skill play Puck against the real server without a desync")
    func humansPlay() async throws {
        let run = try await SwarmRunTests.run(
            """
            name: humans
            profile: [{ramp: {to: 6, over: 1s}}, {hold: {for: 5s}}]
            personas:
              - {name: novice, game: puck, behavior: human, skill: beginner, input_rate: 60hz}
              - {name: regular, game: puck, behavior: human, input_rate: 60hz}
              - {name: pro, game: puck, behavior: human, skill: skilled, input_rate: 60hz}
            thresholds: {desyncs: "== 0"}
            """, seconds: 6)
        #expect(run.summary.personas.map(\.name) == ["novice", "regular", "pro"])
        for persona in run.summary.personas {
            #expect(persona.peakBots == 2, "\(persona.name)")
            #expect(persona.packetsPerSecond > 30, "\(persona.name) sends its inputs")
            #expect(persona.desyncs == 0, "\(persona.name)")
        }
        #expect(run.summary.games["puck"]?.matchesStarted ?? 0 >= 3)
        #expect(run.summary.passed)
        // Its predictions are the replica's, judged like the scripted players'.
        #expect((run.summary.predictionErrorPixels?.count ?? 0) > 0)
    }

    @Test func aSkillThatIsNoneIsRefusedWithTheChoices() {
        expectRefusal(
            "name: h\npersonas:\n  - {name: p, game: puck, behavior: human, skill: expert}", line: 3,
            message: "unknown skill `expert`", hint: "beginner, casual, skilled")
        #expect(throws: Never.self) {
            let script = try Catalogue.builtIn.scriptLoader.parse(
                "name: h\npersonas:\n  - {name: p, game: puck, behavior: human, skill: skilled}", file: "h.yaml")
            #expect(script.personas[0].options.get(SnapOptions.Human.self)?.skill == .skilled)
        }
    }
}
