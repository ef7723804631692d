/// A Prometheus text exposition (format 0.0.4, and the OpenMetrics text it extends), parsed: every sample with its
/// labels, and the `# HELP` and `# TYPE` of each family.
///
/// The swarm benchmark reads the server's own counters between trials (packets sent, rejected, late ticks), so a
/// figure is only as good as this parser: labels are read with their escapes (`\\`, `\"`, `\n`), values may be
/// `NaN` or `±Inf`, and a line that is not a sample, a comment or blank is an error naming that line rather than
/// a sample silently left out of a sum.
package struct PrometheusText: Sendable {
    package var samples: [PrometheusSample]
    /// `# HELP` text per metric family, unescaped.
    package var help: [String: String]
    /// `# TYPE` per metric family (`counter`, `gauge`, `histogram`, `summary`, `untyped`).
    package var types: [String: String]

    package init(parsing text: String) throws(PrometheusParseError) {
        samples = []
        help = [:]
        types = [:]
        var number = 0
        // "\r\n" is one Character in Swift, so lines are split on either.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            do {
                try read(Array(line.utf8))
            } catch {
                throw PrometheusParseError(line: number, text: String(line), reason: error.reason)
            }
        }
    }

    /// Fetches and parses `http://127.0.0.1:<port><path>`; anything but a 200 with parseable text is an error.
    package static func fetch(
        port: Int, path: String = "/metrics", client: LoopbackHTTPClient = LoopbackHTTPClient()
    ) throws -> PrometheusText {
        let response = try client.get(port: port, path: path)
        guard response.status == 200 else {
            throw HTTPClientError.unexpectedStatus(url: "http://127.0.0.1:\(port)\(path)", status: response.status)
        }
        return try PrometheusText(parsing: response.text)
    }

    /// The sum of every sample named `name` (exactly) whose labels include each of `labels`.
    package func sum(_ name: String, labels: [String: String] = [:]) -> Double {
        var total = 0.0
        for sample in samples where sample.name == name {
            guard labels.allSatisfy({ sample.labels[$0.key] == $0.value }) else { continue }
            total += sample.value
        }
        return total
    }

    // MARK: Lines

    private struct LineError: Error {
        var reason: String
    }

    private mutating func read(_ bytes: [UInt8]) throws(LineError) {
        var cursor = Cursor(bytes: bytes)
        cursor.skipSpaces()
        if cursor.peek == UInt8(ascii: "#") {
            cursor.index += 1
            cursor.skipSpaces()
            let keyword = cursor.word()
            guard keyword == "HELP" || keyword == "TYPE" else { return } // any other comment, `# EOF` included
            cursor.skipSpaces()
            let name = cursor.name(allowColon: true)
            guard !name.isEmpty else { throw LineError(reason: "`# \(keyword)` without a metric name") }
            cursor.skipSpaces()
            let rest = cursor.rest()
            if keyword == "HELP" {
                help[name] = Self.unescape(rest, quotes: false)
            } else {
                guard
                    [
                        "counter", "gauge", "histogram", "summary", "untyped", "gaugehistogram", "info", "stateset",
                        "unknown",
                    ].contains(rest)
                else { throw LineError(reason: "unknown metric type `\(rest)`") }
                types[name] = rest
            }
            return
        }
        let name = cursor.name(allowColon: true)
        guard !name.isEmpty else { throw LineError(reason: "a sample must start with a metric name") }
        var labels: [String: String] = [:]
        if cursor.peek == UInt8(ascii: "{") {
            cursor.index += 1
            while true {
                cursor.skipSpaces()
                if cursor.peek == UInt8(ascii: "}") {
                    cursor.index += 1
                    break
                }
                let label = cursor.name(allowColon: false)
                guard !label.isEmpty else { throw LineError(reason: "a label name is missing") }
                cursor.skipSpaces()
                guard cursor.take(UInt8(ascii: "=")) else { throw LineError(reason: "label `\(label)` has no `=`") }
                cursor.skipSpaces()
                guard let value = cursor.quoted() else {
                    throw LineError(reason: "the value of label `\(label)` is not a closed quoted string")
                }
                guard labels[label] == nil else { throw LineError(reason: "label `\(label)` appears twice") }
                labels[label] = value
                cursor.skipSpaces()
                if cursor.take(UInt8(ascii: ",")) { continue }
                guard cursor.take(UInt8(ascii: "}")) else { throw LineError(reason: "labels are not closed by `}`") }
                break
            }
        }
        guard cursor.skipSpaces() > 0 else { throw LineError(reason: "no space between the name and the value") }
        let valueText = cursor.word()
        guard let value = Self.number(valueText) else { throw LineError(reason: "`\(valueText)` is not a number") }
        cursor.skipSpaces()
        var timestamp: Int64?
        if let next = cursor.peek, next != UInt8(ascii: "#") {
            let text = cursor.word()
            guard let stamp = Int64(text) else { throw LineError(reason: "`\(text)` is not a timestamp") }
            timestamp = stamp
            cursor.skipSpaces()
        }
        // An OpenMetrics exemplar (`# {trace_id="…"} 1.0`) may follow; it is not part of the sample.
        guard cursor.peek == nil || cursor.peek == UInt8(ascii: "#") else {
            throw LineError(reason: "unexpected text after the value")
        }
        samples.append(PrometheusSample(name: name, labels: labels, value: value, timestamp: timestamp))
    }

    /// A sample value: Go's `ParseFloat` syntax as Prometheus writes it, with `NaN`, `+Inf` and `-Inf`.
    private static func number(_ text: String) -> Double? {
        switch text {
        case "NaN": return .nan
        case "+Inf", "Inf": return .infinity
        case "-Inf": return -.infinity
        default:
            guard let first = text.first, first.isNumber || first == "-" || first == "+" || first == "." else {
                return nil
            }
            return Double(text)
        }
    }

    private static func unescape(_ text: String, quotes: Bool) -> String {
        var result = ""
        var escaped = false
        for character in text {
            if escaped {
                switch character {
                case "n": result.append("\n")
                case "\\": result.append("\\")
                case "\"" where quotes: result.append("\"")
                default:
                    result.append("\\")
                    result.append(character)
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        if escaped { result.append("\\") }
        return result
    }

    /// A position in one line's bytes.
    private struct Cursor {
        let bytes: [UInt8]
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        @discardableResult
        mutating func skipSpaces() -> Int {
            let start = index
            while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
            return index - start
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        /// Up to the next space or tab.
        mutating func word() -> String {
            let start = index
            while let byte = peek, byte != UInt8(ascii: " "), byte != UInt8(ascii: "\t") { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// `[a-zA-Z_:][a-zA-Z0-9_:]*` (metric names) or `[a-zA-Z_][a-zA-Z0-9_]*` (label names).
        mutating func name(allowColon: Bool) -> String {
            let start = index
            while let byte = peek {
                let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
                let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                let allowed =
                    letter || byte == UInt8(ascii: "_") || (allowColon && byte == UInt8(ascii: ":"))
                    || (digit && index > start)
                guard allowed else { break }
                index += 1
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        /// A `"…"` string with `\\`, `\"` and `\n` escapes; `nil` when it is not closed.
        mutating func quoted() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var value: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let next = peek else { return nil }
                    index += 1
                    switch next {
                    case UInt8(ascii: "n"): value.append(UInt8(ascii: "\n"))
                    case UInt8(ascii: "\\"), UInt8(ascii: "\""): value.append(next)
                    default: value += [UInt8(ascii: "\\"), next]
                    }
                default:
                    value.append(byte)
                }
            }
            return nil
        }

        mutating func rest() -> String {
            defer { index = bytes.count }
            return String(decoding: bytes[index...], as: UTF8.self)
        }
    }
}
