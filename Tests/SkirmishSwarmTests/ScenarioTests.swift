import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishServer
@testable import SkirmishSwarm

/// `scenarios:`: several named scenarios in one script, each with its personas, its load model and its start,
/// running at once; the single-profile form keeps working (every other suite runs it).
@Suite struct ScenarioTests {
    static let yaml = """
        name: launch
        scenarios:
          - name: ranked
            tags: {mode: ranked}
            profile: [{ramp: {to: 6, over: 1s}}, {hold: {for: 3s}}]
            personas:
              - {name: chaser, game: puck, behavior: chaser, weight: 2, input_rate: 10hz}
              - {name: keeper, game: puck, behavior: defender, input_rate: 10hz, tags: {mode: keeper}}
          - name: late
            start: 2s
            profile: [{ramp: {to: 4, over: 500ms}}, {hold: {for: 3500ms}}]
            personas:
              - {name: table, game: snap, seats: 2, snap_reaction: {mean: 100ms, stddev: 10ms}}
          - name: rush
            start: 1s
            profile: [{arrive: {rate: 5/s, for: 2s, max: 10}}]
            personas:
              - {name: joiner, game: snap, seats: 2, steps: [{play: 1s}, {quit: true}]}
        thresholds:
          handshake_failure_rate{scenario:late}: "< 50%"
          rtt_p99{scenario:ranked}: "< 1s"
        """

    @Test("scenarios are read with their personas, starts, profiles and tags")
    func scenariosAreRead() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.yaml, file: "s.yaml")
        #expect(script.scenarios.map(\.name) == ["ranked", "late", "rush"])
        #expect(script.scenarios.map(\.personas) == [0..<2, 2..<3, 3..<4])
        #expect(script.scenarios.map(\.start) == [.zero, .seconds(2), .seconds(1)])
        #expect(script.personas.map(\.name) == ["chaser", "keeper", "table", "joiner"])
        // A scenario's tags and its name label its personas; a persona's own tag wins.
        #expect(script.personas[0].tags == ["mode": "ranked", "scenario": "ranked"])
        #expect(script.personas[1].tags == ["mode": "keeper", "scenario": "ranked"])
        #expect(script.personas[3].tags == ["scenario": "rush"])
        #expect(script.tagNames == ["mode", "scenario"])
        #expect(script.duration == .seconds(6))
        #expect(script.thresholds[0].filter == ["scenario": "late"])
        // The single-profile form is one scenario over every persona, named after the script.
        let single = try Catalogue.builtIn.scriptLoader.parse(
            "name: one\nprofile: [{hold: {for: 5s}}]\npersonas: [{name: a, game: puck}]", file: "o.yaml")
        #expect(single.scenarios.isEmpty)
        #expect(single.plannedScenarios.map(\.name) == ["one"])
        #expect(single.personas[0].tags.isEmpty)
    }

    @Test(
        "a scenario that cannot run is refused at its line",
        arguments: [
            (
                "name: s\nprofile: [{hold: {for: 1s}}]\nscenarios:\n  - {name: a, profile: [{hold: {for: 1s}}], personas: [{name: p, game: puck}]}",
                2, "`profile` beside `scenarios`"
            ),
            (
                "name: s\nscenarios:\n  - {name: a, profile: [{hold: {for: 1s}}], personas: [{name: p, game: puck}]}\n  - {name: a, profile: [{hold: {for: 1s}}], personas: [{name: q, game: puck}]}",
                4, "two scenarios are named `a`"
            ),
            (
                "name: s\nscenarios:\n  - {name: a, profile: [{hold: {for: 1s}}], personas: [{name: p, game: puck}]}\n  - {name: b, profile: [{hold: {for: 1s}}], personas: [{name: p, game: puck}]}",
                4, "two personas are named `p`"
            ),
            ("name: s\nscenarios:\n  - {name: a, personas: [{name: p, game: puck}]}", 3, "has no `profile`"),
            ("name: s\nscenarios:\n  - {name: a, profile: [{hold: {for: 1s}}]}", 3, "has no `personas`"),
            (
                "name: s\nscenarios:\n  - {name: a, start: soon, profile: [{hold: {for: 1s}}], personas: [{name: p, game: puck}]}",
                3, "start"
            ),
            (
                "name: s\nscenarios:\n  - {name: a, profile: [{hold: {for: 1s}}], persona: [{name: p, game: puck}]}",
                3, "persona"
            ),
            ("name: s\nscenarios: []", 2, "`scenarios` is empty"),
            (
                "name: s\nscenarios:\n  - {name: a, profile: [{hold: {for: 1s}}], personas: [{name: p, game: puck, tags: {scenario: x}}]}",
                3, "would replace a label"
            ),
        ] as [(String, Int, String)])
    func aBadScenarioIsRefused(yaml: String, line: Int, message: String) {
        expectRefusal(yaml, line: line, message: message)
    }

    @Test("each scenario follows its own profile from its start; the run lasts until the last ends")
    func thePlanRunsScenariosSideBySide() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.yaml, file: "s.yaml")
        let plan = try LoadPlan(script: script)
        #expect(plan.duration == .seconds(6))
        #expect(plan.scenarios.map(\.end) == [.seconds(4), .seconds(6), .seconds(3)])
        func bots(_ seconds: Double) -> [Int] {
            plan.scenarios.indices.map { plan.closedBots(at: .seconds(seconds), scenario: $0) }
        }
        #expect(bots(0.5) == [3, 0, 0])
        #expect(bots(1.5) == [6, 0, 0])
        #expect(bots(2.25) == [6, 2, 0])
        #expect(bots(3) == [6, 4, 0])
        #expect(bots(4.5) == [0, 4, 0], "a scenario past its end holds no bots")
        #expect(plan.closedBots(at: .seconds(3)) == 10)
        #expect(plan.runPeakClosedBots == 10)
        // Arrivals belong to their scenario, from its start, numbered within it.
        let arrivals = plan.arrivals(from: .zero, to: plan.duration)
        #expect(arrivals.count == 10)
        #expect(arrivals.allSatisfy { $0.scenario == 2 })
        #expect(arrivals.map(\.local) == Array(0..<10))
        #expect(arrivals.first?.at == .seconds(1))
        #expect(abs(((arrivals.last?.at ?? .zero) - .seconds(2.8)).seconds) < 1e-9)

        // --bots scales every scenario's closed stages by one factor; --duration scales starts and lengths.
        let scaled = try LoadPlan(script: script, overrides: .init(bots: 20, duration: .seconds(12)))
        #expect(scaled.scenarios.map(\.runPeakClosedBots) == [12, 8, 0])
        #expect(scaled.scenarios.map(\.start) == [.zero, .seconds(4), .seconds(2)])
        #expect(scaled.duration == .seconds(12))
        // --bots is split over the scenarios' peaks by largest remainder: the peaks add up to it exactly, and a
        // count that would leave a scenario without a bot is refused, naming it and a count that works.
        let three = try Catalogue.builtIn.scriptLoader.parse(
            """
            name: three
            scenarios:
              - {name: a, profile: [{ramp: {to: 1, over: 1s}}], personas: [{name: p, game: puck}]}
              - {name: b, profile: [{ramp: {to: 1, over: 1s}}], personas: [{name: q, game: puck}]}
              - {name: c, profile: [{ramp: {to: 1, over: 1s}}, {arrive: {rate: 1/s, for: 1s, max: 3}}], personas: [{name: r, game: puck}]}
            """, file: "t.yaml")
        let ten = try LoadPlan(script: three, overrides: .init(bots: 10))
        #expect(ten.scenarios.map(\.runPeakClosedBots) == [4, 3, 3])
        #expect(ten.scenarios[2].stages.last == .arrive(rate: 1, for: .seconds(1), max: 10), "--bots caps open stages")
        #expect {
            try LoadPlan(script: script, overrides: .init(bots: 1))
        } throws: { error in
            "\(error)".contains("leaves scenario `late` without a bot") && "\(error)".contains("give --bots 2")
        }
        // Sharded, each scenario's bots are split on their own.
        let shard = try LoadPlan(script: script, shard: Shard(index: 1, count: 3))
        #expect(shard.peakClosedBots == 2 + 1)
    }

    @Test("each scenario's bots play its own personas, dealt by their weights within it")
    func personasStayInTheirScenario() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.yaml, file: "s.yaml")
        for shard in [Shard.whole, Shard(index: 1, count: 3)] {
            let plan = try LoadPlan(script: script, shard: shard)
            let deal = PersonaDeal(script.personas, plan: plan)
            let ranked = shard.share(of: 6)
            #expect(deal.closedBase == [0, ranked, ranked + shard.share(of: 4)])
            for number in 0..<ranked { #expect((0..<2).contains(deal.index(forClosed: number))) }
            for number in ranked..<(ranked + shard.share(of: 4)) { #expect(deal.index(forClosed: number) == 2) }
            for arrival in plan.arrivals(from: .zero, to: plan.duration) {
                #expect(deal.index(forArrival: arrival) == 3)
            }
        }
        let deal = PersonaDeal(script.personas, plan: try LoadPlan(script: script))
        #expect(deal.peaks(of: [6, 4, 0]) == [4, 2, 4, 0], "weights 2:1 within ranked")
        // The single-profile form deals exactly as one table over every persona.
        let single = try Catalogue.builtIn.scriptLoader.parse(
            "name: one\nprofile: [{ramp: {to: 12, over: 1s}}]\npersonas: [{name: a, game: puck, weight: 3}, {name: b, game: puck}]",
            file: "o.yaml")
        let plan = try LoadPlan(script: single, shard: Shard(index: 0, count: 2))
        let table = PersonaTable(single.personas, shard: plan.shard, closedBots: plan.runPeakClosedBots)
        let one = PersonaDeal(single.personas, plan: plan)
        #expect((0..<6).map(one.index(forClosed:)) == (0..<6).map(table.index(forClosed:)))
    }

    @Test("a run with three scenarios against the real server: each plays its own personas, labelled by scenario")
    func threeScenariosRunAtOnce() async throws {
        // The script's own length: --duration 6 s stretches nothing.
        let run = try await SwarmRunTests.run(Self.yaml, seconds: 6)
        let (summary, outcome) = (run.summary, run.outcome)
        #expect(summary.personas.map(\.scenario) == ["ranked", "ranked", "late", "rush"])
        #expect(summary.personas.map(\.peakBots) == [4, 2, 4, 0])
        #expect(summary.peakBots == 10)
        let handshakes = { (persona: String) in
            outcome.snapshot.counterTotal(SkirmishMetrics.handshakes, where: ["persona": persona, "outcome": "ok"])
        }
        #expect(handshakes("chaser") >= 4 && handshakes("keeper") >= 2 && handshakes("table") >= 4)
        #expect(handshakes("joiner") >= 1, "the rush's arrivals joined")
        // Every series of a scenario's persona carries the scenario and its tags.
        let chaser = outcome.snapshot.series(of: SkirmishMetrics.handshakes, where: ["persona": "chaser"])
        #expect(
            !chaser.isEmpty && chaser.allSatisfy { $0.labels["scenario"] == "ranked" && $0.labels["mode"] == "ranked" })
        // When each scenario's bots come and go is the plan's (thePlanRunsScenariosSideBySide), which each loop
        // follows on its own timer; timing it here would measure the machine, not the plan.
        let samples = try #require(outcome.samples)
        #expect(samples.total.keys.sorted() == ["chaser", "joiner", "keeper", "table"])
        // Thresholds filtered by scenario read that scenario alone.
        #expect(summary.thresholds.map(\.filter) == [["scenario": "late"], ["scenario": "ranked"]])
        #expect(summary.thresholds.allSatisfy { $0.passed }, "\(summary.thresholds)")
    }
}
