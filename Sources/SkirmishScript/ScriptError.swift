/// A problem in a swarm script, located by file, line and column, with a hint saying how to fix it.
///
/// Every key, value and range in a script is checked; nothing is silently ignored, so a typo never turns into a run
/// that measured something else than intended.
public struct ScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// 1-based; 0 when the problem is the file as a whole.
    public var line: Int
    public var column: Int
    public var message: String
    public var hint: String?

    public init(file: String, line: Int, column: Int, message: String, hint: String? = nil) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.hint = hint
    }

    public var description: String {
        let location = line > 0 ? "\(file):\(line):\(column)" : file
        return hint.map { "\(location): error: \(message)\n  hint: \($0)" } ?? "\(location): error: \(message)"
    }
}
