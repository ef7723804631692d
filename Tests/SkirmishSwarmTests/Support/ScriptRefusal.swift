import SkirmishScript
import SkirmishSwarm
import Testing

/// Checks that the built-in catalogue's loader refuses `yaml` with a `ScriptError` at `line` whose message holds
/// `message` and, when given, whose hint holds `hint`; records the error it got otherwise.
func expectRefusal(
    _ yaml: String, line: Int, message: String, hint: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(sourceLocation: sourceLocation) {
        try Catalogue.builtIn.scriptLoader.parse(yaml, file: "t.yaml")
    } throws: { error in
        guard let error = error as? ScriptError, error.line == line, error.message.contains(message),
            hint.map({ error.hint?.contains($0) ?? false }) ?? true
        else {
            Issue.record("unexpected error: \(error)", sourceLocation: sourceLocation)
            return false
        }
        return true
    }
}
