import Foundation
import Logging
import Synchronization
import Testing

@testable import SkirmishTelemetry

/// The log handler's two formats: JSON a collector can parse line by line, text a person can read, one event per
/// line either way.
@Suite struct LogLineTests {
    /// Writes through a real `Logger` into captured lines.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var output: LogOutput { LogOutput { line in self.lines.withLock { $0.append(line) } } }
    }

    static func logger(_ format: LogFormat, level: Logger.Level = .info, into lines: Lines) -> Logger {
        Logger(label: "skirmish.test") { label in
            LogLineHandler(label: label, format: format, level: level, output: lines.output) { 1_764_020_405_123 }
        }
    }

    static func object(_ line: String) throws -> [String: Any] {
        let data = Data(line.utf8)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func aJSONLineIsOneObjectWithTheFieldsAndMetadataAsStrings() throws {
        let lines = Lines()
        var logger = Self.logger(.json, into: lines)
        logger[metadataKey: "run"] = "quickstart-1"
        logger.warning(
            "desync", metadata: ["bot.id": "17", "match.id": .stringConvertible(42), "nested": ["a": "1", "b": "2"]])
        #expect(lines.all.count == 1)
        let line = try #require(lines.all.first)
        #expect(line.hasSuffix("}\n"))
        #expect(line.dropLast().contains("\n") == false)
        let object = try Self.object(line)
        #expect(object["ts"] as? String == "2025-11-24T21:40:05.123Z")
        #expect(object["level"] as? String == "warning")
        #expect(object["label"] as? String == "skirmish.test")
        #expect(object["msg"] as? String == "desync")
        #expect(object["run"] as? String == "quickstart-1")
        #expect(object["bot.id"] as? String == "17")
        #expect(object["match.id"] as? String == "42")
        #expect(object["nested.a"] as? String == "1" && object["nested.b"] as? String == "2")
        #expect(object["source"] == nil)
    }

    @Test(arguments: [
        "say \"hi\"", "two\nlines\r\nand a tab\t", "back\\slash", "naïve café ✓ 日本 🎯", "bell\u{07} nul\u{00} esc\u{1B}",
        "\u{2028}separator",
    ])
    func awkwardTextSurvivesTheRoundTripOnOneLine(_ text: String) throws {
        let lines = Lines()
        let logger = Self.logger(.json, into: lines)
        logger.info("\(text)", metadata: ["peer.addr": "\(text)", "msg": "\(text)"])
        let line = try #require(lines.all.first)
        // One line: the only raw newline ends it.
        #expect(line.filter { $0 == "\n" || $0 == "\r\n" }.count == 1)
        #expect(!line.unicodeScalars.dropLast().contains { $0.value < 0x20 })
        let object = try Self.object(line)
        #expect(object["msg"] as? String == text)
        #expect(object["peer.addr"] as? String == text)
        // Metadata named like a field of the line itself does not overwrite it.
        #expect(object["meta.msg"] as? String == text)
    }

    @Test func textIsOneReadableLineWithQuotedValues() throws {
        let lines = Lines()
        let logger = Self.logger(.text, into: lines)
        logger.notice("rejected input", metadata: ["reason": "bad_magic", "error": "a \"b\" c", "count": "3"])
        logger.info("multi\nline")
        #expect(
            lines.all == [
                "2025-11-24T21:40:05.123Z notice skirmish.test: rejected input count=3 error=\"a \\\"b\\\" c\" "
                    + "reason=bad_magic\n",
                "2025-11-24T21:40:05.123Z info skirmish.test: multi\\nline\n",
            ])
    }

    @Test func aDisabledLevelNeitherWritesNorBuildsItsMessage() {
        let lines = Lines()
        let logger = Self.logger(.json, level: .warning, into: lines)
        let built = Atomic<Int>(0)
        func expensive() -> String {
            built.add(1, ordering: .relaxed)
            return "expensive"
        }
        logger.debug("\(expensive())", metadata: ["x": "\(expensive())"])
        logger.info("\(expensive())")
        #expect(built.load(ordering: .relaxed) == 0)
        #expect(lines.all.isEmpty)
        logger.error("\(expensive())")
        #expect(built.load(ordering: .relaxed) == 1)
        #expect(lines.all.count == 1)
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"), (-1, "1969-12-31T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"), (1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
        (4_102_444_800_007, "2100-01-01T00:00:00.007Z"),
    ])
    func timestampsAreRFC3339InUTCWithMilliseconds(_ milliseconds: Int64, _ expected: String) {
        #expect(LogLine.timestamp(milliseconds) == expected)
    }

    @Test func timestampsAgreeWithFoundationsCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var random = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let milliseconds = Int64.random(in: 0...4_000_000_000_000, using: &random)
            // Whole seconds are exact in a Double; the milliseconds are appended as integers.
            let date = Date(timeIntervalSince1970: Double(milliseconds / 1000))
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.year!, parts.month!, parts.day!, parts.hour!,
                parts.minute!, parts.second!, Int(milliseconds % 1000))
            #expect(LogLine.timestamp(milliseconds) == expected, "\(milliseconds)")
        }
    }

    @Test func anOutputThatCannotWriteDoesNotStopTheProgram() {
        // A closed descriptor: every write fails with EBADF and the line is dropped.
        LogOutput.writeAll("lost\n", to: -1)
        let logger = Logger(label: "closed") { label in
            LogLineHandler(label: label, format: .json, output: LogOutput { LogOutput.writeAll($0, to: -1) })
        }
        logger.error("still running")
        #expect(Bool(true))
    }
}
