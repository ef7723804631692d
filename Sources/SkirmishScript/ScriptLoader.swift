import Foundation
import SkirmishWire
import Yams

/// Reads and validates a swarm script.
///
/// Strict by design: unknown keys, duplicate keys, bad durations, impossible values and options given to a
/// behaviour that ignores them are all errors naming the file, line and a fix. Hostile input is bounded: the file
/// size, nesting depth and number of YAML nodes visited (which also defuses alias bombs) are capped.
public struct ScriptLoader: Sendable {
    /// Largest script file read.
    public static let maxFileSize = 1 << 20
    /// Most YAML nodes visited, counting every expansion of an alias.
    public static let maxNodes = 20_000
    /// Deepest nesting of YAML mappings and sequences accepted.
    public static let maxDepth = 24
    /// Most personas a script may declare.
    public static let maxPersonas = 64
    /// Most steps a persona's program may have.
    public static let maxSteps = 64
    /// Most stages a load profile may have.
    public static let maxStages = 64
    /// The most concurrent bots a script may ask for (one process holds ~19,000; shards go beyond).
    public static let maxBots = 1_000_000

    /// The protocols, their options and their behaviours that scripts may name: a catalogue's (SkirmishSwarm's
    /// `Catalogue.scriptVocabulary`).
    public var vocabulary: ScriptVocabulary

    /// What `${NAME}` and `${NAME:-default}` in a script's values read: the process's environment unless set.
    ///
    /// Only values are expanded (never keys), after YAML has parsed them, so a variable cannot change the script's
    /// structure. `${NAME}` with `NAME` unset is an error located at the value; `${NAME:-default}` uses `default`
    /// when `NAME` is unset or empty; `$$` is a literal `$`.
    public var environment: [String: String]

    /// Whether `name` can be read as `${name}`: ASCII letters, digits and `_`, not starting with a digit.
    public static func isVariableName(_ name: String) -> Bool { Interpolation.isName(name.unicodeScalars) }

    /// A loader for scripts in `vocabulary`, expanding variables from `environment` (default: the process's).
    public init(
        vocabulary: ScriptVocabulary, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.vocabulary = vocabulary
        self.environment = environment
    }

    /// Loads the script at `path`.
    public func load(path: String) throws(ScriptError) -> Script {
        let url = URL(fileURLWithPath: path)
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let size = attributes[.size] as? Int, size > Self.maxFileSize {
                throw ScriptError(
                    file: path, line: 0, column: 0, message: "script is \(size) bytes, above the 1 MiB limit",
                    hint: "a script describes personas and a profile; it never needs to be this large")
            }
            data = try Data(contentsOf: url)
        } catch let error as ScriptError {
            throw error
        } catch {
            throw ScriptError(
                file: path, line: 0, column: 0, message: "cannot read the script (\(error.localizedDescription))",
                hint: "check the path; scripts ship in bots/, e.g. bots/quickstart.yaml")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ScriptError(
                file: path, line: 0, column: 0, message: "script is not valid UTF-8", hint: "save it as UTF-8")
        }
        return try parse(text, file: path)
    }

    /// Parses script text; `file` names it in errors.
    public func parse(_ text: String, file: String) throws(ScriptError) -> Script {
        guard text.utf8.count <= Self.maxFileSize else {
            throw ScriptError(file: file, line: 0, column: 0, message: "script is above the 1 MiB limit")
        }
        guard let marked = Interpolation.mark(text) else {
            throw ScriptError(
                file: file, line: 0, column: 0,
                message: "script holds U+E000 or U+E001, private-use characters reserved for reading ${NAME}",
                hint: "remove them; a script never needs them")
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: marked)
        } catch let error as YamlError {
            throw Self.locate(error, file: file)
        } catch {
            throw ScriptError(file: file, line: 0, column: 0, message: "not valid YAML: \(error)")
        }
        guard let root else {
            throw ScriptError(
                file: file, line: 0, column: 0, message: "script is empty",
                hint: "start from bots/quickstart.yaml: a name, a profile, personas and thresholds")
        }
        var reader = NodeReader(file: file)
        reader.vocabulary = vocabulary
        reader.environment = environment
        var script = try reader.script(root)
        script.digest = Script.digest(of: text)
        script.text = text
        for name in Interpolation.names(in: marked) {
            if let value = environment[name] { script.variables[name] = value }
        }
        return script
    }

    private static func locate(_ error: YamlError, file: String) -> ScriptError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _),
            .composer(_, let problem, let mark, _):
            return ScriptError(
                file: file, line: mark.line, column: mark.column, message: "not valid YAML: \(problem)",
                hint: "check indentation and quoting near this line")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.map { "`\($0)`" }.joined(separator: ", ")
            return ScriptError(
                file: file, line: context.mark.line, column: context.mark.column,
                message: "duplicate key \(keys) in one mapping", hint: "each key may appear once; keep one")
        default:
            return ScriptError(file: file, line: 0, column: 0, message: "not valid YAML: \(error)")
        }
    }
}

/// Walks the YAML tree with a budget, turning every problem into a located `ScriptError`.
struct NodeReader {
    let file: String
    var visited = 0
    var vocabulary = ScriptVocabulary()
    /// What `${NAME}` in a value reads.
    var environment: [String: String] = [:]

    init(file: String) { self.file = file }

    func error(_ node: Node, _ message: String, hint: String? = nil) -> ScriptError {
        ScriptError(
            file: file, line: node.mark?.line ?? 0, column: node.mark?.column ?? 0, message: message, hint: hint)
    }

    mutating func count(_ node: Node, depth: Int) throws(ScriptError) {
        visited += 1
        guard visited <= ScriptLoader.maxNodes else {
            throw error(
                node, "script has more than \(ScriptLoader.maxNodes) YAML nodes (aliases included)",
                hint: "remove repeated aliases; scripts are small")
        }
        guard depth <= ScriptLoader.maxDepth else {
            throw error(node, "script nests deeper than \(ScriptLoader.maxDepth) levels")
        }
    }

    /// A mapping whose keys are taken one by one; `finish` refuses whatever was not taken.
    mutating func fields(_ node: Node, _ what: String, depth: Int) throws(ScriptError) -> Fields {
        try count(node, depth: depth)
        guard case .mapping(let mapping) = node else {
            throw error(node, "\(what) must be a mapping of keys to values", hint: "write it as `key: value` lines")
        }
        var entries: [Fields.Entry] = []
        for (key, value) in mapping {
            try count(key, depth: depth + 1)
            try count(value, depth: depth + 1)
            guard case .scalar(let scalar) = key else { throw error(key, "keys must be plain words") }
            if scalar.string.unicodeScalars.contains(Interpolation.open) {
                throw error(
                    key, "`\(Interpolation.unmark(scalar.string))` in \(what): only values may use ${NAME}, never keys",
                    hint: "write the key itself and the variable in its value, as in `to: ${BOTS:-40}`")
            }
            if let earlier = entries.first(where: { $0.key == scalar.string }) {
                throw error(
                    key, "duplicate key `\(scalar.string)` in \(what)",
                    hint: "it is already set on line \(earlier.keyNode.mark?.line ?? 0); keep one")
            }
            entries.append(Fields.Entry(key: scalar.string, keyNode: key, value: value))
        }
        return Fields(node: node, what: what, entries: entries)
    }

    mutating func sequence(_ node: Node, _ what: String, depth: Int, limit: Int) throws(ScriptError) -> [Node] {
        try count(node, depth: depth)
        guard case .sequence(let sequence) = node else {
            throw error(node, "\(what) must be a list", hint: "write each item on a line starting with `- `")
        }
        guard sequence.count <= limit else { throw error(node, "\(what) has more than \(limit) items") }
        return Array(sequence)
    }

    /// A scalar's text, with `${NAME}` and `${NAME:-default}` replaced from ``environment``.
    func string(_ node: Node, _ what: String) throws(ScriptError) -> String {
        guard case .scalar(let scalar) = node else { throw error(node, "\(what) must be a single value") }
        switch Interpolation.expand(scalar.string, environment: environment) {
        case .success(let text):
            return text
        case .failure(let problem):
            throw error(scalar, problem, what)
        }
    }

    /// The error for a reference that could not be expanded, located at its `$` where the scalar is on one line.
    private func error(_ scalar: Node.Scalar, _ problem: Interpolation.Problem, _ what: String) -> ScriptError {
        func located(_ offset: Int, _ message: String, hint: String) -> ScriptError {
            var column = scalar.mark?.column ?? 0
            if column > 0, !scalar.string.contains("\n") {
                switch scalar.style {
                case .plain: column += offset
                case .singleQuoted, .doubleQuoted: column += offset + 1
                default: break
                }
            }
            return ScriptError(
                file: file, line: scalar.mark?.line ?? 0, column: column, message: message, hint: hint)
        }
        switch problem {
        case .unset(let name, let offset):
            return located(
                offset, "\(what) uses `${\(name)}`, and \(name) is not set",
                hint: "set it (\(name)=… skirmish swarm …), pass --env \(name)=…, or give a default: ${\(name):-value}")
        case .unclosed(let offset):
            return located(
                offset, "\(what) has `${` with no closing `}`",
                hint: "write ${NAME} or ${NAME:-default}; write $$ for a literal $")
        case .badName(let name, let offset):
            return located(
                offset, "\(what) uses `${\(name)}`, and `\(name)` is not a variable name",
                hint: "names are letters, digits and _ (not starting with a digit); a default follows `:-`, as in "
                    + "${BOTS:-40}")
        case .tooLong(let length):
            return located(
                0,
                "\(what) is \(length) characters once its variables are replaced, above the limit of "
                    + "\(Interpolation.maxLength)",
                hint: "a script's values are short: a count, a duration, an address")
        }
    }

    func integer(_ node: Node, _ what: String, in range: ClosedRange<Int>) throws(ScriptError) -> Int {
        let text = try string(node, what)
        guard let value = Int(text.trimmed) else {
            throw error(node, "\(what) must be a whole number, got `\(text)`")
        }
        guard range.contains(value) else {
            throw error(node, "\(what) must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
        return value
    }

    func duration(_ node: Node, _ what: String, positive: Bool = false) throws(ScriptError) -> Duration {
        let text = try string(node, what)
        guard let value = Quantity.duration(text) else {
            throw error(node, "\(what) `\(text)` is not a duration", hint: "write durations like 250ms, 30s, 5m, 1h")
        }
        if positive, value <= .zero { throw error(node, "\(what) must be longer than zero") }
        return value
    }

    func range(_ node: Node, _ what: String) throws(ScriptError) -> ClosedRange<Duration> {
        let text = try string(node, what)
        guard let value = Quantity.durationRange(text) else {
            throw error(
                node, "\(what) `\(text)` is not a duration or a range of durations",
                hint: "write 2s or 2s..5s (low first)")
        }
        return value
    }

    func rate(_ node: Node, _ what: String, max: Double) throws(ScriptError) -> Double {
        let text = try string(node, what)
        guard let value = Quantity.rate(text), value > 0 else {
            throw error(node, "\(what) `\(text)` is not a positive rate", hint: "write rates like 30hz or 50/s")
        }
        guard value <= max else { throw error(node, "\(what) \(text) is above the limit of \(Int(max)) per second") }
        return value
    }

    func percentage(_ node: Node, _ what: String) throws(ScriptError) -> Double {
        let text = try string(node, what)
        guard let value = Quantity.percentage(text) else {
            throw error(node, "\(what) `\(text)` is not a percentage", hint: "write it like 1% or 0.5% (0% to 100%)")
        }
        return value
    }

    func label(_ node: Node, _ what: String) throws(ScriptError) -> String {
        let text = try string(node, what)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
        guard !text.isEmpty, text.count <= 64, text.allSatisfy({ allowed.contains($0) }) else {
            throw error(
                node, "\(what) `\(text)` must be 1–64 letters, digits, `-`, `_` or `.`",
                hint: "it becomes a metric label, so keep it short and plain")
        }
        return text
    }

    func choice<T: RawRepresentable & CaseIterable>(_ node: Node, _ what: String, _: T.Type) throws(ScriptError) -> T
    where T.RawValue == String {
        try choice(node, what, T.allCases.map { ($0.rawValue, $0) })
    }

    func choice<T>(_ node: Node, _ what: String, _ options: [(name: String, value: T)]) throws(ScriptError) -> T {
        let text = try string(node, what)
        guard let value = options.first(where: { $0.name == text.trimmed.lowercased() })?.value else {
            let names = options.map(\.name)
            throw error(
                node, "unknown \(what) `\(text)`",
                hint: (suggestion(text, names).map { "did you mean `\($0)`? " } ?? "")
                    + "choose one of: \(names.joined(separator: ", "))")
        }
        return value
    }
}

/// The keys of one YAML mapping, consumed as they are read.
struct Fields {
    struct Entry {
        var key: String
        var keyNode: Node
        var value: Node
    }

    let node: Node
    let what: String
    var entries: [Entry]
    private var taken: Set<String> = []

    init(node: Node, what: String, entries: [Entry]) {
        self.node = node
        self.what = what
        self.entries = entries
    }

    func contains(_ key: String) -> Bool { entries.contains { $0.key == key } }

    /// The keys not taken so far.
    var unread: [String] { entries.map(\.key).filter { !taken.contains($0) } }

    mutating func take(_ key: String) -> Node? {
        guard let entry = entries.first(where: { $0.key == key }) else { return nil }
        taken.insert(key)
        return entry.value
    }

    /// Refuses keys nobody took, suggesting the closest known key.
    func finish(_ reader: NodeReader, known: [String], unusable: [String: String] = [:]) throws(ScriptError) {
        for entry in entries where !taken.contains(entry.key) {
            if let reason = unusable[entry.key] {
                throw reader.error(entry.keyNode, "`\(entry.key)` does not apply to this persona", hint: reason)
            }
            let hint =
                (suggestion(entry.key, known).map { "did you mean `\($0)`? " } ?? "")
                + "known keys in \(what): \(known.joined(separator: ", "))"
            throw reader.error(entry.keyNode, "unknown key `\(entry.key)` in \(what)", hint: hint)
        }
    }
}

/// The closest candidate within edit distance 2, if any.
func suggestion(_ word: String, _ candidates: [String]) -> String? {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1]
            for (j, cb) in b.enumerated() {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
    let word = Array(word.lowercased())
    return candidates.map { ($0, distance(word, Array($0))) }.filter { $0.1 <= 2 }.min { $0.1 < $1.1 }?.0
}
