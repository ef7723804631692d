import Foundation
import SkirmishWire

extension ConformanceReport {
    /// The report as one JSON document: the target, the counts, and every check with its outcome (and, for a
    /// failure, what was expected and seen; for a skip, why; a check's note when it made one), for scripts and
    /// dashboards.
    public func json(target: Target) -> String {
        struct Document: Encodable {
            struct Check: Encodable {
                var id: String
                var title: String
                var outcome: String
                var seconds: Double
                var expected: String?
                var saw: String?
                var reason: String?
                var note: String?
            }
            var target: String
            var passed: Int
            var failed: Int
            var skipped: Int
            var seconds: Double
            var checks: [Check]
        }
        let checks = results.map { result in
            var check = Document.Check(
                id: result.check.id, title: result.check.title, outcome: "pass", seconds: result.seconds,
                note: result.note)
            switch result.outcome {
            case .pass: break
            case .fail(let expected, let saw):
                check.outcome = "fail"
                check.expected = expected
                check.saw = saw
            case .skip(let why):
                check.outcome = "skip"
                check.reason = why
            }
            return check
        }
        let document = Document(
            target: target.description, passed: passed, failed: failed, skipped: skipped, seconds: seconds,
            checks: checks)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The report as JUnit XML, as CI systems read it: one `testsuite` for the target, one `testcase` per check
    /// (`classname` is the check's group, `conformance.session`), a failure with its message, a skip with its reason,
    /// and a check's note as its `system-out`.
    public func junit(target: Target) -> String {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let counts =
            "tests=\"\(results.count)\" failures=\"\(failed)\" errors=\"0\" skipped=\"\(skipped)\" "
            + "time=\"\(Self.seconds(seconds))\""
        xml += "<testsuites name=\"skirmish conformance\" \(counts)>\n"
        xml += "  <testsuite name=\"\(Self.escape("conformance of \(target)"))\" \(counts)>\n"
        for result in results {
            let group = result.check.id.split(separator: ".").first.map(String.init) ?? result.check.id
            xml += "    <testcase classname=\"conformance.\(Self.escape(group))\" "
            xml += "name=\"\(Self.escape(result.check.id)): \(Self.escape(result.check.title))\" "
            xml += "time=\"\(Self.seconds(result.seconds))\""
            var body = ""
            switch result.outcome {
            case .pass:
                break
            case .fail(let expected, let saw):
                let message = "expected \(expected), saw \(saw)"
                body += "      <failure type=\"fail\" message=\"\(Self.escape(message))\">"
                body += "\(Self.escape(message))</failure>\n"
            case .skip(let why):
                body += "      <skipped message=\"\(Self.escape(why))\"/>\n"
            }
            if let note = result.note { body += "      <system-out>\(Self.escape(note))</system-out>\n" }
            xml += body.isEmpty ? "/>\n" : ">\n\(body)    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// Seconds with millisecond precision, as JUnit's `time` attributes are written.
    private static func seconds(_ value: Double) -> String { String(format: "%.3f", value) }

    /// `text` safe inside an XML attribute or element: the five predefined entities, and control characters (which
    /// XML 1.0 cannot hold at all) as spaces.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
            default: escaped.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0xFFFE ? " " : scalar)
            }
        }
        return escaped
    }
}
