import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `skirmish swarm` as a person runs it: the built executable, its exit status, its files, its signals.
@Suite(.serialized) struct CommandLineTests {
    /// The `skirmish` executable built beside this test bundle (any scratch path), else under `.build`.
    static func executable() throws -> URL {
        var candidates: [URL] = []
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("skirmish"))
            directory = directory.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates += [".build/debug/skirmish", ".build/release/skirmish"].map { root.appendingPathComponent($0) }
        for url in candidates where FileManager.default.isExecutableFile(atPath: url.path) { return url }
        Issue.record("no skirmish executable beside the tests or under .build; run `swift build --build-tests`")
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

    /// Runs the tool to its end (bounded by `limit`), capturing its output; `signal` is sent after `signalAfter`.
    static func run(
        _ arguments: [String], limit: Duration = .seconds(60), signalAfter: Duration? = nil, signal: Int32 = SIGINT,
        environment: [String: String] = [:]
    ) async throws -> Finished {
        let process = Process()
        process.executableURL = try executable()
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        if let signalAfter {
            try await Task.sleep(for: signalAfter)
            kill(process.processIdentifier, signal)
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

    @Test(arguments: [("SIGINT", SIGINT), ("SIGTERM", SIGTERM)])
    func aSignalMidRunStillWritesTheSummaryAndReport(name: String, signal: Int32) async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let finished = try await Self.run(
            [
                "swarm", root.appendingPathComponent("bots/quickstart.yaml").path, "--duration", "60s", "--out",
                directory.path, "--plain-progress",
            ], limit: .seconds(40), signalAfter: .seconds(4), signal: signal)
        #expect(finished.stderr.contains(name))
        let summaryURL = directory.appendingPathComponent("summary.json")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: summaryURL)) as? [String: Any])
        #expect(summary["interrupted"] as? Bool == true)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("report.html").path))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("metrics.om").path))
        #expect(finished.stdout.contains("stopped early"))
        // The shell's convention for a process a signal stopped, after everything was written.
        #expect(finished.status == (signal == SIGINT ? 130 : 143))
    }

    /// Every kind of bad input exits 2 with a message naming the input: flags argument-parser refuses, flags the
    /// run refuses, and a Kubernetes Job environment that names no shard.
    @Test(arguments: [
        (["--bots", "many"], [:], "--bots"),
        (["--bots", "0"], [:], "--bots"),
        // One socket per bot: five million bots need more open files than any process here may hold.
        (["--bots", "5000000"], [:], "open files"),
        (["--duration", "soon"], [:], "--duration"),
        (["--shard", "4/4"], [:], "--shard"),
        (["--target", "carrier-pigeon://x:1"], [:], "--target"),
        ([], ["JOB_COMPLETION_INDEX": "9", "JOB_COMPLETIONS": "4"], "JOB_COMPLETION_INDEX"),
        // Kubernetes sets only the index; without the manifest's count no pod may take every bot.
        ([], ["JOB_COMPLETION_INDEX": "0"], "JOB_COMPLETIONS"),
    ])
    func badFlagsAndEnvironmentExitTwoNamingTheInput(
        flags: [String], environment: [String: String], named: String
    ) async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let finished = try await Self.run(
            ["swarm", root.appendingPathComponent("bots/quickstart.yaml").path, "--out", directory.path] + flags,
            limit: .seconds(30), environment: environment)
        #expect(finished.status == 2, "\(finished.stderr)")
        #expect(finished.stderr.contains(named), "\(finished.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("summary.json").path))
    }
}
