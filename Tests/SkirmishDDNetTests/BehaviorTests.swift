import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire
import Testing

@testable import SkirmishDDNet

/// The behaviours alone, driven by hand with the time given: what they send and what they count.
@Suite struct BehaviorTests {
    private static let persona = Persona(name: "p", gameName: "ddnet", behavior: .idle, inputRate: 50)

    /// A world in which the bot (client 0) stands at `x`.
    private static func world(x: Int, tick: Int = 0) -> World {
        World(tick: tick, localClientID: 0, characters: [World.Character(clientID: 0, x: x, y: 500)])
    }

    @Test func theIdlerSendsNothingAndNeverWakes() {
        var harness = AgentHarness(persona: Self.persona) { _ in Idler() }
        harness.establish(clientID: 0, at: .at(1))
        harness.receive(.world(Self.world(x: 100)), at: .at(1.02))
        #expect(harness.agent.nextWake == nil)
        #expect(harness.run(until: .at(60)) == 0)
        #expect(harness.sent.isEmpty)
    }

    @Test func theRunnerRunsBothWaysJumpsAndHooksOnItsServerTickGrid() {
        var harness = AgentHarness(persona: Self.persona, seed: 11) { _ in Runner(inputRate: 50) }
        harness.establish(clientID: 0, at: .at(1))
        // Its character keeps moving, as on an open floor, so it never thinks itself stuck.
        let wakes = harness.run(until: .at(61)) { time in Self.world(x: Int(time.nanoseconds / 5_000_000)) }
        #expect(wakes >= 50 * 60 - 1 && wakes <= 50 * 60 + 1, "\(wakes) looks in 60 s at 50 Hz")
        let inputs = harness.inputs
        #expect(inputs.count > 60, "only \(inputs.count) changes of input in a minute")
        #expect(inputs.contains { $0.direction == -1 } && inputs.contains { $0.direction == 1 })
        // Jumps are presses and releases; hooks go up and are let go.
        #expect(inputs.filter(\.jump).count >= 20)
        #expect(inputs.filter { !$0.jump }.count >= 20)
        #expect(inputs.filter(\.hook).count >= 10)
        #expect(inputs.filter(\.hook).allSatisfy { $0.targetY < 0 })
        // It sends only changes.
        #expect(zip(inputs, inputs.dropFirst()).allSatisfy { $0 != $1 })
    }

    @Test func theRunnerIsTheSameForTheSameSeedAndDiffersForAnother() {
        func inputs(seed: UInt64) -> [DDNetConnection.Input] {
            var harness = AgentHarness(persona: Self.persona, seed: seed) { _ in Runner(inputRate: 50) }
            harness.establish(clientID: 0, at: .at(1))
            harness.run(until: .at(21)) { time in Self.world(x: Int(time.nanoseconds / 10_000_000)) }
            return harness.inputs
        }
        #expect(inputs(seed: 5) == inputs(seed: 5))
        #expect(inputs(seed: 5) != inputs(seed: 6))
    }

    @Test func aRunnerAgainstAWallJumpsThenTurnsRound() throws {
        // A seed whose runner sets off running (one in ten first stands still), with directions held for 30 s.
        let pace = Runner.Pace(direction: .seconds(30) ... .seconds(30))
        var found: AgentHarness<Runner>?
        for seed in UInt64(1)...20 {
            var harness = AgentHarness(persona: Self.persona, seed: seed) { _ in Runner(inputRate: 50, pace: pace) }
            harness.establish(clientID: 0, at: .at(1))
            if harness.inputs.last.map({ $0.direction != 0 }) == true {
                found = harness
                break
            }
        }
        var harness = try #require(found)
        let first = try #require(harness.inputs.last?.direction)
        // Stuck at x = 640 whatever it does: a second of no headway turns it round.
        harness.run(until: .at(3)) { _ in Self.world(x: 640) }
        let directions = harness.inputs.map(\.direction)
        #expect(directions.contains(-first), "held \(first) against a wall for two seconds: \(directions)")
        #expect(harness.inputs.contains { $0.jump })
    }

    @Test func theRunnerLooksAtMostOnceATick() {
        var harness = AgentHarness(persona: Self.persona) { _ in Runner(inputRate: 500) }
        harness.establish(clientID: 0, at: .at(1))
        #expect(harness.run(until: .at(2)) <= 51)
        var slow = AgentHarness(persona: Self.persona) { _ in Runner(inputRate: 5) }
        slow.establish(clientID: 0, at: .at(1))
        #expect(slow.run(until: .at(2)) <= 6)
    }

    @Test func theChatterCountsItsOwnLinesEchoedAndThoseThatNeverCameBack() {
        let options = EchoChatter.Options(every: .seconds(2) ... .seconds(2), echoTimeout: .seconds(3))
        var harness = AgentHarness(persona: Self.persona, series: BehaviorSeries(checks: ["chat_echoed"])) { _ in
            EchoChatter(options: options)
        }
        harness.establish(clientID: 7, at: .at(0))
        harness.run(until: .at(2))
        #expect(harness.lines == ["p bot 3 line 1"])
        // Another player's line with the same number, and the server's own, change nothing.
        harness.receive(.chat(.init(clientID: 8, team: false, text: "p bot 4 line 1")), at: .at(2.05))
        harness.receive(.chat(.init(clientID: -1, team: false, text: "welcome 1")), at: .at(2.06))
        #expect(harness.check("chat_echoed").judged == 0)
        harness.receive(.chat(.init(clientID: 7, team: false, text: "p bot 3 line 1")), at: .at(2.1))
        #expect(harness.check("chat_echoed") == (1, 0))
        // Line 2 (said at 4 s) is skipped: line 3's echo passes, and line 2, which lines come back in order behind,
        // fails with it.
        harness.run(until: .at(6))
        #expect(harness.lines.count == 3)
        harness.receive(.chat(.init(clientID: 7, team: false, text: "p bot 3 line 3")), at: .at(6.1))
        #expect(harness.check("chat_echoed") == (3, 1))
        // Line 4 (said at 8 s) never comes back: it fails three seconds later, while line 5 (10 s) may still.
        harness.run(until: .at(11.5))
        #expect(harness.lines.count == 5)
        #expect(harness.check("chat_echoed") == (4, 2))
        #expect(harness.agent.echoed == 2 && harness.agent.lost == 2)
    }

    @Test func theChatterLearnsItsClientIDFromTheWorldWhenTheSessionLacksIt() {
        let options = EchoChatter.Options(every: .seconds(1) ... .seconds(1))
        var harness = AgentHarness(persona: Self.persona, series: BehaviorSeries(checks: ["chat_echoed"])) { _ in
            EchoChatter(options: options)
        }
        harness.establish(clientID: nil, at: .at(0))
        harness.receive(.world(World(tick: 1, localClientID: 4, characters: [])), at: .at(0.02))
        harness.run(until: .at(1))
        harness.receive(.chat(.init(clientID: 4, team: false, text: "p bot 3 line 1")), at: .at(1.1))
        #expect(harness.check("chat_echoed") == (1, 0))
    }

    @Test(
        arguments: [
            ("p bot 3 line 12", 12), ("line 0", 0), ("no number", nil), ("", nil), ("x 12345678901", nil),
        ] as [(String, Int?)])
    func aLineNumberIsTheTrailingNumber(text: String, number: Int?) {
        #expect(EchoChatter.lineNumber(text) == number)
    }
}
