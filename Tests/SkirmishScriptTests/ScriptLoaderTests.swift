import Foundation
import SkirmishNet
import SkirmishOpponent
import SkirmishSwarm
import SkirmishWire
import Testing

@testable import SkirmishScript

/// The repository's `bots/` folder, found from this file's location.
let botsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("bots")

@Suite struct ScriptLoaderTests {
    static let shipped = [
        "quickstart", "puck-ladder", "snap-tables", "suns-race", "reconnect-storm", "rogue", "soak", "launch-day",
    ]

    @Test(arguments: shipped)
    func everyShippedScriptLoadsAndStartsWithAHeaderComment(name: String) throws {
        let path = botsFolder.appendingPathComponent(name + ".yaml").path
        let script = try Catalogue.builtIn.scriptLoader.load(path: path)
        #expect(script.name == name)
        #expect(!script.personas.isEmpty)
        #expect(script.duration > .zero)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("# \(name) — "), "the first line says what the script is for")
    }

    @Test func theDesignExampleParsesToTheIntendedValues() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(
            """
            name: puck-ladder
            profile: [{ramp: {to: 1000, over: 30s}}, {hold: {for: 5m}}, {ramp: {to: 0, over: 10s}}]
            personas:
              - {name: chaser, weight: 8, game: puck, behavior: chaser, input_rate: 30hz,
                 link: {latency: 40ms, jitter: 10ms, loss: 1%}}
              - {name: sparring, weight: 2, game: puck, behavior: ai, difficulty: hard}
              - name: snap-casual
                weight: 5
                game: snap
                seats: 3
                snap_reaction: {mean: 600ms, stddev: 150ms}
                steps: [{chat: "gl hf"}, {play: until_match_over}, {think: 2s..5s}, {repeat: true}]
            thresholds: {rtt_p99: "< 120ms", desyncs: "== 0", handshake_failure_rate: "< 0.1%"}
            """, file: "design.yaml")
        #expect(
            script.profile == [
                .ramp(to: 1_000, over: .seconds(30)), .hold(for: .seconds(300)), .ramp(to: 0, over: .seconds(10)),
            ])
        #expect(script.duration == .seconds(340))
        let chaser = script.personas[0]
        #expect(chaser.weight == 8 && chaser.game == .puck && chaser.behavior == .chaser && chaser.inputRate == 30)
        #expect(chaser.link.latency == .milliseconds(40) && chaser.link.jitter == .milliseconds(10))
        #expect(chaser.link.loss == 0.01)
        #expect(script.personas[1].difficulty == .hard)
        let snap = script.personas[2]
        #expect(snap.behavior == .snapPlayer && snap.seats == 3)
        #expect(
            snap.options.get(SnapOptions.SnapPlayer.self)?.reaction
                == ReactionSpec(mean: .milliseconds(600), stddev: .milliseconds(150)))
        #expect(
            snap.steps == [
                .chat("gl hf"), .playUntilMatchOver, .think(.seconds(2) ... .seconds(5)), .repeat(times: nil),
            ])
        let rtt = try #require(script.thresholds.first { $0.metric.name == "rtt_p99" })
        #expect(rtt.comparison == .less && rtt.limit == 0.12)
        #expect(rtt.holds(0.119) && !rtt.holds(0.12))
        let failures = try #require(script.thresholds.first { $0.metric.name == "handshake_failure_rate" })
        #expect(abs(failures.limit - 0.001) < 1e-12)
    }

    /// Broken scripts and the line, column and words of the error each must produce.
    static let broken: [(yaml: String, line: Int, message: String, hint: String?)] = [
        ("name: x\npersonas: [{name: a, game: puck, wieght: 3}]", 2, "unknown key `wieght`", "did you mean `weight`?"),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nprofile: [{hold: {for: 30 seconds}}]", 3, "is not a duration",
            "250ms"
        ),
        ("name: x\npersonas: [{name: a, game: puk}]", 2, "unknown game `puk`", "did you mean `puck`?"),
        ("name: x\npersonas: [{name: a, game: puck, seats: 3}]", 2, "between 2 and 2", nil),
        ("name: x\npersonas: [{name: a, game: snap, seats: 5}]", 2, "between 2 and 4", nil),
        (
            "name: x\npersonas: [{name: a, game: puck, difficulty: hard}]", 2, "does not apply to this persona",
            "only behavior `ai`"
        ),
        ("name: x\npersonas: [{name: a, game: snap, behavior: chaser}]", 2, "cannot play snap", "it plays puck"),
        ("name: x\npersonas: [{name: a, game: puck, link: {loss: 0.01}}]", 2, "is not a percentage", "1%"),
        ("name: x\npersonas: [{name: a, game: puck, link: {loss: 150%}}]", 2, "is not a percentage", nil),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {rtt_p98: \"< 1s\"}", 3, "unknown threshold",
            "rtt_p99"
        ),
        ("name: x\npersonas: [{name: a, game: puck}]\nthresholds: {rtt_p99: 120}", 3, "must start with", "< 120ms"),
        ("name: x\npersonas: [{name: a, game: puck}]\nthresholds: {desyncs: \"== 0ms\"}", 3, "wrong unit", "== 0"),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {rtt_p99: {window: 1m}}", 3, "has no `limit`",
            "window: 5m"
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {rtt_p99: {limit: \"< 1s\", windw: 1m}}", 3,
            "unknown key `windw`", "did you mean `window`?"
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {rtt_p99: {limit: \"< 1s\", window: 0s}}", 3,
            "must be longer than zero", nil
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {errors: {limit: \"== 0\", abort_on_fail: maybe}}",
            3, "must be true or false", nil
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {rtt_p99: {limit: \"< 1s\", window: 500ms}}", 3,
            "is not whole seconds", "once a second"
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {errors: {limit: \"< 3\", delay_abort_eval: 1m}}",
            3, "without abort_on_fail", "abort_on_fail: true"
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {exporter_failures: {limit: \"== 0\", window: 1m}}",
            3, "whole run only", nil
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {matches_completed: {limit: \"> 9\", abort_on_fail: true}}",
            3, "would stop the run at its first second", "delay_abort_eval"
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {rtt_p99: {limit: \"< 1s\", window: 500ms}}", 3,
            "is not whole seconds", "once a second"
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {errors: {limit: \"< 3\", delay_abort_eval: 1m}}",
            3, "without abort_on_fail", "abort_on_fail: true"
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {exporter_failures: {limit: \"== 0\", window: 1m}}",
            3, "whole run only", nil
        ),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nthresholds: {matches_completed: {limit: \"> 9\", abort_on_fail: true}}",
            3, "would stop the run at its first second", "delay_abort_eval"
        ),
        (
            "name: x\npersonas:\n  - {name: a, game: puck}\n  - {name: a, game: snap}", 4, "two personas are named `a`",
            nil
        ),
        ("name: x\nname: y\npersonas: [{name: a, game: puck}]", 1, "duplicate key `name`", "keep one"),
        (
            "name: x\npersonas: [{name: a, game: puck, steps: [{repeat: true}, {think: 1s}]}]", 2,
            "must be the last step", nil
        ),
        ("name: x\npersonas: [{name: a, game: puck, steps: [{sleep: 1s}]}]", 2, "unknown step `sleep`", nil),
        ("name: x\npersonas: [{name: a, game: puck}]\nprofile: [{ramp: {to: -5, over: 1s}}]", 3, "between 0 and", nil),
        (
            "name: x\npersonas: [{name: a, game: puck}]\nprofile: [{ramp: {to: 5}}]", 3, "needs `to` (bots) and `over`",
            nil
        ),
        ("name: x\npersonas: [{name: a, game: puck, input_rate: 30}]", 2, "is not a positive rate", "30hz"),
        ("name: x\npersonas: [{name: a, game: puck, think: 1s}]", 2, "unknown key `think`", nil),
        ("name: bad name!\npersonas: [{name: a, game: puck}]", 1, "must be 1–64 letters", nil),
        ("name: x\npersonas: [{name: a, game: puck}\n", 3, "not valid YAML", nil),
        ("personas: [{name: a, game: puck}]", 1, "has no `name`", nil),
        ("name: x", 1, "has no `personas`", nil),
        ("name: x\npersonas: [{name: a}]", 2, "does not say which `game`", nil),
    ]

    @Test(arguments: broken)
    func aBrokenScriptNamesFileLineAndFix(yaml: String, line: Int, message: String, hint: String?) {
        #expect {
            _ = try Catalogue.builtIn.scriptLoader.parse(yaml, file: "bots/broken.yaml")
        } throws: { error in
            guard let error = error as? ScriptError else { return false }
            let described = error.description
            let matches =
                error.file == "bots/broken.yaml" && error.line == line && error.message.contains(message)
                && (hint.map { error.hint?.contains($0) ?? false } ?? true)
                && described.hasPrefix("bots/broken.yaml:\(line):")
            if !matches { Issue.record("unexpected error: \(described)") }
            return matches
        }
    }

    @Test func anAliasBombIsRefusedWithinTheNodeBudget() {
        var yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            yaml +=
                "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
                + "]\n"
        }
        yaml += "name: bomb\npersonas: [{name: a, game: puck}]\n"
        let clock = ContinuousClock()
        let started = clock.now
        #expect(throws: ScriptError.self) { try Catalogue.builtIn.scriptLoader.parse(yaml, file: "bomb.yaml") }
        #expect(started.duration(to: clock.now) < .seconds(10))
    }

    @Test func aGiantFileIsRefusedBeforeParsing() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "giant-\(UInt32.random(in: 0...UInt32.max)).yaml"
        ).path
        let line = "# " + String(repeating: "x", count: 1_000) + "\n"
        try String(repeating: line, count: 1_100).write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try Catalogue.builtIn.scriptLoader.load(path: path)
        } throws: { error in
            (error as? ScriptError)?.message.contains("above the 1 MiB limit") ?? false
        }
    }

    @Test func aMissingFileSaysWhereScriptsLive() {
        #expect {
            _ = try Catalogue.builtIn.scriptLoader.load(path: "bots/no-such-script.yaml")
        } throws: { error in
            (error as? ScriptError)?.hint?.contains("bots/quickstart.yaml") ?? false
        }
    }

    @Test(arguments: [
        ("250ms", 0.25), ("1.5s", 1.5), ("30s", 30.0), ("5m", 300.0), ("2h", 7_200.0), ("0s", 0.0),
    ])
    func durationsParseWithTheirUnit(text: String, seconds: Double) throws {
        #expect(try #require(Quantity.duration(text)).seconds == seconds)
    }

    @Test(arguments: ["30", "-1s", "1x", "", "s", "1e400s", "+5s", "10d"])
    func durationsWithoutAValidUnitAreRefused(text: String) {
        #expect(Quantity.duration(text) == nil)
    }

    @Test func ratesRangesAndPercentagesParse() {
        #expect(Quantity.rate("30hz") == 30)
        #expect(Quantity.rate("50/s") == 50)
        #expect(Quantity.rate("120/m") == 2)
        #expect(Quantity.rate("30") == nil)
        #expect(Quantity.percentage("0.5%") == 0.005)
        #expect(Quantity.percentage("101%") == nil)
        #expect(Quantity.durationRange("2s..5s") == .seconds(2) ... .seconds(5))
        #expect(Quantity.durationRange("5s..2s") == nil)
        #expect(Quantity.durationRange("3s") == .seconds(3) ... .seconds(3))
    }
}
