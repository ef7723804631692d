import ArgumentParser
import SkirmishScript

/// One `--env KEY=VALUE`: a value for `${KEY}` in the script, taking precedence over the environment.
struct ScriptVariable: Sendable, Hashable {
    var name: String
    var value: String

    /// Parses `KEY=VALUE` (the value may be empty and may hold `=`), or says what is wrong with it; argument-parser
    /// names the option before the reason.
    @Sendable
    static func parse(_ text: String) throws -> ScriptVariable {
        guard let equals = text.firstIndex(of: "=") else {
            throw ValidationError("write KEY=VALUE, such as BOTS=200 (the script reads it as ${BOTS})")
        }
        let name = String(text[..<equals])
        guard ScriptLoader.isVariableName(name)
        else {
            throw ValidationError(
                "'\(name)' is not a variable name: letters, digits and _, not starting with a digit")
        }
        return ScriptVariable(name: name, value: String(text[text.index(after: equals)...]))
    }

    /// `environment` with `variables` added, later ones winning.
    static func environment(_ environment: [String: String], adding variables: [ScriptVariable]) -> [String: String] {
        var merged = environment
        for variable in variables { merged[variable.name] = variable.value }
        return merged
    }
}
