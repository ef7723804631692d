import Foundation
import Testing

@testable import SkirmishSwarm

/// Reading a `summary.json` back: each way it can be wrong is one line naming the file and the fix.
@Suite struct RunSummaryFileTests {
    private func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "skirmish-summary-\(UInt64.random(in: 0...UInt64.max)).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A figure the run did not measure is `null` in the file written and loads back as absent, not as 0.
    @Test func aFigureNotMeasuredIsWrittenAsNullAndLoadsAsAbsent() throws {
        let summary = try AbsentFigureTests.run(AbsentFigureTests.plainPlan, protocolName: "plain")
        let directory = NSTemporaryDirectory() + "skirmish-summary-\(UInt64.random(in: 0...UInt64.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try RunOutput.writeSummary(summary, to: directory)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("\"rtt\" : null") && text.contains("\"desyncs\" : null"))
        let loaded = try RunSummary.load(path: path)
        #expect(loaded.latency.rtt == nil && loaded.desyncs == nil && loaded.packets.lost == nil)
        #expect(loaded.packets.resends == 0 && loaded.latency.handshake?.count == 4)
        #expect(loaded.protocol == "plain" && loaded.personas.map(\.figures) == summary.personas.map(\.figures))
    }

    @Test func aMissingFileNamesItsRoleAndWhereSummariesAre() {
        let path = NSTemporaryDirectory() + "skirmish-no-such-summary.json"
        do {
            _ = try RunSummary.load(path: path, role: "baseline")
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.description.hasPrefix("cannot read the baseline \(path): "))
            #expect(error.description.hasSuffix("(skirmish-out/<run id>/summary.json by default)."))
        }
    }

    @Test(
        arguments: [
            ("{ not json", "not valid JSON"),
            ("[1, 2]", "unexpected value at "),
            ("{}", "missing field "),
        ])
    func textThatIsNotASummarySaysWhatIsWrong(text: String, phrase: String) throws {
        let path = try write(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try RunSummary.load(path: path)
            Issue.record("`\(text)` loaded as a summary")
        } catch {
            #expect(error.description.hasPrefix("\(path) is not a Skirmish run summary (\(phrase)"))
            #expect(error.description.hasSuffix("written by `skirmish swarm` or `skirmish soak`."))
        }
    }
}
