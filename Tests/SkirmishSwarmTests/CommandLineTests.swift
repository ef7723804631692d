import Foundation
import Testing

/// `skirmish swarm` as a person runs it: the built executable, its exit status, its files, its signals.
@Suite(.serialized) struct CommandLineTests {
    /// The `skirmish` executable built beside the tests (`swift build --build-tests` builds it too).
    static func executable() throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        for candidate in [".build/debug/skirmish", ".build/release/skirmish"] {
            let url = root.appendingPathComponent(candidate)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        Issue.record("no skirmish executable under .build; run `swift build --build-tests` (make test does)")
        throw CocoaError(.fileNoSuchFile)
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    struct Finished {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the tool to its end (bounded by `limit`), capturing its output.
    static func run(_ arguments: [String], limit: Duration = .seconds(60), interruptAfter: Duration? = nil)
        async throws -> Finished
    {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        if let interruptAfter {
            try await Task.sleep(for: interruptAfter)
            process.interrupt()
        }
        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.terminate()
            Issue.record("skirmish \(arguments.joined(separator: " ")) did not finish within \(limit)")
        }
        process.waitUntilExit()
        return Finished(
            status: process.terminationStatus,
            stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test func aBrokenScriptIsBadInputWithFileAndLine() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("broken.yaml")
        try """
        name: broken
        profile: [{ramp: {to: 10, over: 5 seconds}}]
        personas: [{name: a, weight: 1, game: puck}]
        """.write(to: script, atomically: true, encoding: .utf8)
        let finished = try await Self.run(["swarm", script.path, "--out", directory.path])
        #expect(finished.status == 2)
        #expect(finished.stderr.contains("broken.yaml:2"))
    }

    @Test func aFailedThresholdExitsNinetyNineAndStillWritesTheSummary() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("strict.yaml")
        try """
        name: strict
        profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 1s}}]
        personas: [{name: chaser, weight: 1, game: puck}]
        thresholds: {matches_completed: "> 1000000"}
        """.write(to: script, atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out")
        let finished = try await Self.run(["swarm", script.path, "--out", out.path])
        #expect(finished.status == 99)
        #expect(finished.stdout.contains("FAIL"))
        let summary = try JSONSerialization.jsonObject(
            with: Data(contentsOf: out.appendingPathComponent("summary.json")))
        #expect((summary as? [String: Any])?["passed"] as? Bool == false)
    }

    @Test func interruptingARunStillWritesTheSummaryAndReport() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let finished = try await Self.run(
            [
                "swarm", root.appendingPathComponent("bots/quickstart.yaml").path, "--duration", "60s", "--out",
                directory.path, "--plain-progress",
            ], limit: .seconds(40), interruptAfter: .seconds(4))
        #expect(finished.stderr.contains("SIGINT"))
        let summaryURL = directory.appendingPathComponent("summary.json")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: summaryURL)) as? [String: Any])
        #expect(summary["interrupted"] as? Bool == true)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("report.html").path))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("metrics.om").path))
        #expect([0, 99].contains(finished.status))
    }
}
