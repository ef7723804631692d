/// `${NAME}` and `${NAME:-default}` in a script's values, replaced from the environment.
///
/// Values are expanded after YAML has parsed them, so a variable's text can never change a script's structure (a
/// value holding `, ` or a newline stays one value). Before parsing, ``mark(_:)`` swaps the braces of each reference
/// for two private-use characters, so `{to: ${BOTS}}` is plain text to YAML even in flow style, where `{` and `}`
/// would otherwise end the value; columns stay where they were, since each brace is still one character. `$$` is a
/// literal `$`, and a `$` followed by anything else stays as written, so scripts written before interpolation read
/// the same.
enum Interpolation {
    /// The longest value an expansion may produce (one scalar of a script).
    static let maxLength = 64 << 10

    /// What `{` of a `${` reference becomes before parsing.
    static let open: Unicode.Scalar = "\u{E000}"
    /// What the `}` closing a reference becomes before parsing.
    static let close: Unicode.Scalar = "\u{E001}"

    /// Why a value could not be expanded; `offset` counts the characters before the `$` of the bad reference.
    enum Problem: Error, Equatable {
        /// `${NAME}` with `NAME` unset and no default.
        case unset(name: String, offset: Int)
        /// `${` with no `}` after it on the same line.
        case unclosed(offset: Int)
        /// `${…}` whose name is not letters, digits and `_` (not starting with a digit).
        case badName(String, offset: Int)
        /// The expanded value is longer than ``maxLength``.
        case tooLong(Int)
    }

    /// `text` with the braces of every `${…}` closed on its own line swapped for ``open`` and ``close``; `$$` and
    /// everything else unchanged. `nil` when `text` already holds one of the two characters (it could not be read
    /// back unambiguously).
    static func mark(_ text: String) -> String? {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.contains(open), !scalars.contains(close) else { return nil }
        guard scalars.contains("$") else { return text }
        // Where the first `}` or newline at or after each position is, in one backward pass: searching forward
        // from every `${` would take quadratic time on a hostile line of `${${${…`.
        var stop = [Int](repeating: scalars.count, count: scalars.count + 1)
        for index in scalars.indices.reversed() {
            stop[index] = scalars[index] == "}" || scalars[index] == "\n" ? index : stop[index + 1]
        }
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "$", index + 1 < scalars.count {
                if scalars[index + 1] == "$" {
                    output.append(contentsOf: scalars[index...(index + 1)])
                    index += 2
                    continue
                }
                if scalars[index + 1] == "{", index + 2 <= scalars.count, case let end = stop[index + 2],
                    end < scalars.count, scalars[end] == "}"
                {
                    output.append("$")
                    output.append(open)
                    output.append(contentsOf: scalars[(index + 2)..<end])
                    output.append(close)
                    index = end + 1
                    continue
                }
            }
            output.append(scalar)
            index += 1
        }
        return String(output)
    }

    /// The names of the references in `marked` (as ``mark(_:)`` left it), each once: the variables a script reads.
    /// `$$` is skipped as the literal it is; a malformed name is left out (loading fails on it anyway).
    static func names(in marked: String) -> Set<String> {
        var names: Set<String> = []
        let scalars = Array(marked.unicodeScalars)
        var index = 0
        while index + 1 < scalars.count {
            guard scalars[index] == "$" else {
                index += 1
                continue
            }
            if scalars[index + 1] == "$" {
                index += 2
                continue
            }
            guard scalars[index + 1] == open, let end = scalars[(index + 2)...].firstIndex(of: close) else {
                index += 1
                continue
            }
            var name = scalars[(index + 2)..<end]
            if let colon = name.firstIndex(of: ":") { name = scalars[(index + 2)..<colon] }
            if isName(name) { names.insert(String(String.UnicodeScalarView(name))) }
            index = end + 1
        }
        return names
    }

    /// `text` (as ``mark(_:)`` left it) with every reference replaced from `environment`.
    static func expand(_ text: String, environment: [String: String]) -> Result<String, Problem> {
        guard text.unicodeScalars.contains("$") else { return .success(text) }
        let scalars = Array(text.unicodeScalars)
        var output = String.UnicodeScalarView()
        var length = 0
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            guard scalar == "$", index + 1 < scalars.count else {
                output.append(scalar)
                length += 1
                index += 1
                continue
            }
            switch scalars[index + 1] {
            case "$":
                output.append("$")
                length += 1
                index += 2
            case "{":
                return .failure(.unclosed(offset: index))
            case open:
                // `mark` pairs every open with the close before the next newline, so the first close is its own.
                guard let end = scalars[(index + 2)...].firstIndex(of: close) else {
                    return .failure(.unclosed(offset: index))
                }
                let inside = scalars[(index + 2)..<end]
                var name = inside
                var fallback: ArraySlice<Unicode.Scalar>?
                if let colon = inside.firstIndex(of: ":"), colon + 1 < end, scalars[colon + 1] == "-" {
                    name = scalars[(index + 2)..<colon]
                    fallback = scalars[(colon + 2)..<end]
                }
                let nameText = String(String.UnicodeScalarView(name))
                guard isName(name) else { return .failure(.badName(nameText, offset: index)) }
                let value: String
                if let set = environment[nameText], !(set.isEmpty && fallback != nil) {
                    value = set
                } else if let fallback {
                    value = String(String.UnicodeScalarView(fallback))
                } else {
                    return .failure(.unset(name: nameText, offset: index))
                }
                length += value.unicodeScalars.count
                guard length <= maxLength else { return .failure(.tooLong(length)) }
                output.append(contentsOf: value.unicodeScalars)
                index = end + 1
            default:
                output.append(scalar)
                length += 1
                index += 1
            }
        }
        guard length <= maxLength else { return .failure(.tooLong(length)) }
        return .success(String(output))
    }

    /// `text` as its author wrote it: the braces ``mark(_:)`` swapped put back (for messages about keys).
    static func unmark(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0 == open ? "{" : $0 == close ? "}" : $0 }))
    }

    /// Whether `name` is a shell variable name: ASCII letters, digits and `_`, not starting with a digit.
    static func isName(_ name: some Collection<Unicode.Scalar>) -> Bool {
        guard let first = name.first, !("0"..."9").contains(first) else { return false }
        return name.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        }
    }
}
