/// A problem in a swarm script, located by file, line and column, with a hint saying how to fix it.
///
/// Every key, value and range in a script is checked; nothing is silently ignored, so a typo never turns into a run
/// that measured something else than intended.
public struct ScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The script's path as given to the loader.
    public var file: String
    /// 1-based; 0 when the problem is the file as a whole.
    public var line: Int
    /// 1-based; 0 when the problem is the file as a whole.
    public var column: Int
    /// What is wrong, naming the key or value it found (for example an unknown behaviour's name).
    public var message: String
    /// How to fix it (a likely spelling, the allowed values), when there is something to suggest.
    public var hint: String?

    /// An error at `file`:`line`:`column`; use line and column 0 for a problem with the whole file.
    public init(file: String, line: Int, column: Int, message: String, hint: String? = nil) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.hint = hint
    }

    /// `file:line:column: error: message`, then the hint on its own line, as compilers print errors.
    public var description: String {
        let location = line > 0 ? "\(file):\(line):\(column)" : file
        return hint.map { "\(location): error: \(message)\n  hint: \($0)" } ?? "\(location): error: \(message)"
    }
}
