import Logging

/// One log event ready to print: what ``LogLineHandler`` renders, a value so rendering is tested without a handler.
package struct LogLine: Sendable, Equatable {
    package var milliseconds: Int64
    package var level: Logger.Level
    package var label: String
    package var message: String
    /// Metadata flattened to text, sorted by key (nested dictionaries as dotted keys).
    package var fields: [(key: String, value: String)]
    package var source: String?

    package init(
        milliseconds: Int64, level: Logger.Level, label: String, message: String,
        fields: [(key: String, value: String)], source: String? = nil
    ) {
        self.milliseconds = milliseconds
        self.level = level
        self.label = label
        self.message = message
        self.fields = fields
        self.source = source
    }

    package static func == (lhs: LogLine, rhs: LogLine) -> Bool {
        lhs.milliseconds == rhs.milliseconds && lhs.level == rhs.level && lhs.label == rhs.label
            && lhs.message == rhs.message && lhs.source == rhs.source
            && lhs.fields.map(\.key) == rhs.fields.map(\.key) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }

    /// Metadata as sorted string fields: a nested dictionary's keys join their parent's with a dot, an array is
    /// written as `[a, b]`.
    package static func flatten(_ metadata: Logger.Metadata) -> [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = []
        func add(_ key: String, _ value: Logger.Metadata.Value) {
            switch value {
            case .dictionary(let nested):
                for (inner, value) in nested { add(key + "." + inner, value) }
            default:
                fields.append((key, value.description))
            }
        }
        for (key, value) in metadata { add(key, value) }
        return fields.sorted { $0.key < $1.key }
    }

    /// Fields the JSON line sets itself; metadata of the same name is written as `meta.<name>` instead.
    static let reserved: Set<String> = ["ts", "level", "label", "msg", "source"]

    /// One JSON object and a newline.
    package func json() -> String {
        var out = "{\"ts\":\""
        out += Self.timestamp(milliseconds)
        out += "\",\"level\":"
        Self.appendJSON(level.rawValue, to: &out)
        out += ",\"label\":"
        Self.appendJSON(label, to: &out)
        out += ",\"msg\":"
        Self.appendJSON(message, to: &out)
        for (key, value) in fields {
            out += ","
            Self.appendJSON(Self.reserved.contains(key) ? "meta." + key : key, to: &out)
            out += ":"
            Self.appendJSON(value, to: &out)
        }
        if let source {
            out += ",\"source\":"
            Self.appendJSON(source, to: &out)
        }
        out += "}\n"
        return out
    }

    /// `ts level label: msg key=value …` and a newline; values with spaces, quotes or `=` are quoted, line breaks
    /// escaped, so one event is always one line.
    package func text() -> String {
        var out = Self.timestamp(milliseconds) + " " + level.rawValue + " " + label + ": " + Self.oneLine(message)
        for (key, value) in fields {
            out += " " + key + "="
            let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" }
            out += needsQuotes ? "\"" + Self.oneLine(value).replacing("\"", with: "\\\"") + "\"" : Self.oneLine(value)
        }
        if let source { out += " (" + source + ")" }
        return out + "\n"
    }

    private static func oneLine(_ text: String) -> String {
        guard text.contains(where: \.isNewline) else { return text }
        return text.replacing("\r\n", with: "\\n").replacing("\n", with: "\\n").replacing("\r", with: "\\r")
    }

    /// Appends `text` as a JSON string (RFC 8259 §7): quotes, backslashes and control characters escaped, everything
    /// else (any Unicode) as UTF-8.
    static func appendJSON(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// RFC 3339 in UTC with milliseconds (`2026-11-24T21:50:05.123Z`), computed without the C library's time zone
    /// state (days to civil date after Howard Hinnant's `civil_from_days`).
    package static func timestamp(_ milliseconds: Int64) -> String {
        let seconds = milliseconds.floorDivided(by: 1000)
        let millis = Int(milliseconds - seconds * 1000)
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        let year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(millis, 3))Z"
    }
}

extension Int64 {
    /// Division rounding towards negative infinity (times before 1970 stay on the right day).
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
