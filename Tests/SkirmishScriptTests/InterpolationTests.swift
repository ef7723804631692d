import SkirmishSwarm
import Testing

@testable import SkirmishScript

/// `${NAME}` and `${NAME:-default}` in scripts: read from the loader's environment, in values only, located when
/// they cannot be read.
@Suite struct InterpolationTests {
    static func loader(_ environment: [String: String]) -> ScriptLoader {
        var loader = Catalogue.builtIn.scriptLoader
        loader.environment = environment
        return loader
    }

    static let script = """
        name: ${NAME:-env-demo}
        profile: [{ramp: {to: ${BOTS}, over: 10s}}, {hold: {for: ${HOLD:-30s}}}]
        personas:
          - name: talker
            game: snap
            steps: [{chat: "${GREETING:-gl hf}"}, {play: until_match_over}]
        """

    @Test func valuesAreReadFromTheEnvironmentEvenInFlowStyle() throws {
        let script = try Self.loader(["BOTS": "250", "HOLD": "2m", "NAME": "nightly"]).parse(
            Self.script, file: "e.yaml")
        #expect(script.name == "nightly")
        #expect(script.profile == [.ramp(to: 250, over: .seconds(10)), .hold(for: .seconds(120))])
        #expect(script.personas[0].steps.first == .chat("gl hf"))
    }

    @Test func aDefaultIsUsedWhenTheVariableIsUnsetOrEmpty() throws {
        for environment in [["BOTS": "7"], ["BOTS": "7", "HOLD": "", "NAME": ""]] {
            let script = try Self.loader(environment).parse(Self.script, file: "e.yaml")
            #expect(script.name == "env-demo")
            #expect(script.profile == [.ramp(to: 7, over: .seconds(10)), .hold(for: .seconds(30))])
        }
    }

    @Test func aVariableCannotChangeTheScriptsStructure() throws {
        // Expanded after YAML parsed the value: a comma, a brace and a newline stay text of the one chat line.
        let text = "gg, {hold: {for: 1h}}\nrepeat: true"
        let script = try Self.loader(["BOTS": "3", "GREETING": text]).parse(Self.script, file: "e.yaml")
        #expect(script.personas[0].steps.first == .chat(text))
        #expect(script.duration == .seconds(40))
    }

    @Test func anUnsetVariableWithoutADefaultIsLocatedAndExplained() {
        #expect {
            try Self.loader([:]).parse(Self.script, file: "bots/e.yaml")
        } throws: { error in
            guard let error = error as? ScriptError else { return false }
            // Line 2, at the `$` of `${BOTS}` (column 23 of `profile: [{ramp: {to: ${BOTS}, …`).
            return error.line == 2 && error.column == 23 && error.message.contains("`${BOTS}`, and BOTS is not set")
                && (error.hint?.contains("--env BOTS=") ?? false) && (error.hint?.contains("${BOTS:-value}") ?? false)
        }
    }

    @Test func dollarDollarIsALiteralDollarAndALoneDollarStaysAsWritten() throws {
        let yaml = """
            name: cash
            personas: [{name: a, game: snap, steps: [{chat: "costs $5, literally $${BOTS}"}, {play: until_match_over}]}]
            """
        let script = try Self.loader(["BOTS": "9"]).parse(yaml, file: "c.yaml")
        #expect(script.personas[0].steps.first == .chat("costs $5, literally ${BOTS}"))
    }

    @Test(arguments: [
        ("name: ${}\npersonas: [{name: a, game: puck}]", 1, "is not a variable name"),
        ("name: ${1X}\npersonas: [{name: a, game: puck}]", 1, "is not a variable name"),
        ("name: x\npersonas: [{name: a, game: puck}]\n${KEY}: 3", 3, "only values may use ${NAME}, never keys"),
        ("name: \"${OPEN\"\npersonas: [{name: a, game: puck}]", 1, "has `${` with no closing `}`"),
    ])
    func aBrokenReferenceIsRefusedWithItsLine(yaml: String, line: Int, message: String) {
        #expect {
            try Self.loader(["KEY": "name"]).parse(yaml, file: "b.yaml")
        } throws: { error in
            guard let error = error as? ScriptError, error.line == line, error.message.contains(message) else {
                Issue.record("unexpected error: \(error)")
                return false
            }
            return true
        }
    }

    @Test func anExpansionAboveTheLimitIsRefused() {
        let huge = String(repeating: "x", count: Interpolation.maxLength + 1)
        #expect(
            Interpolation.expand(Interpolation.mark("${A}")!, environment: ["A": huge])
                == .failure(.tooLong(huge.count)))
        #expect(Interpolation.mark("a\u{E000}b") == nil, "the marker characters cannot come from the script")
    }

    @Test func aHostileLineOfOpenReferencesIsLeftAsItIs() {
        // Searched forward from every `${`, this line would cost 10¹¹ steps; one backward pass makes it linear.
        let line = String(repeating: "${", count: 250_000)
        #expect(Interpolation.mark(line) == line)
    }

    @Test func markingKeepsEveryColumnAndLeavesUnclosedReferencesAlone() throws {
        let text = "a: ${X:-1}, b: $${Y}, c: ${Z\nd: é${W}"
        let marked = try #require(Interpolation.mark(text))
        #expect(marked.unicodeScalars.count == text.unicodeScalars.count)
        #expect(Interpolation.unmark(marked) == text)
        #expect(marked.contains("${Z\n"), "a reference not closed on its line is left for the reader to refuse")
    }
}
