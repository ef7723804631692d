import Foundation
import SkirmishSwarm
import SkirmishTestSupport
import Testing

@testable import SkirmishTelemetry

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
        let process = ChildProcess()
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
            process.send(signal)
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

    @Test func scriptVariablesComeFromEnvAndTheEnvironmentAndAnUnsetOneIsBadInput() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("vars.yaml")
        try """
        name: vars
        profile: [{ramp: {to: ${SKIRMISH_TEST_BOTS}, over: 1s}}, {hold: {for: ${SKIRMISH_TEST_HOLD:-3s}}}]
        personas: [{name: chaser, weight: 1, game: puck}]
        """.write(to: script, atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out")

        let unset = try await Self.run(["swarm", script.path, "--out", out.path])
        #expect(unset.status == 2)
        #expect(unset.stderr.contains("vars.yaml:2:"), "\(unset.stderr)")
        #expect(unset.stderr.contains("SKIRMISH_TEST_BOTS is not set"), "\(unset.stderr)")
        let badName = try await Self.run(["swarm", script.path, "--env", "1BOTS=3", "--out", out.path])
        #expect(badName.status == 2)
        #expect(badName.stderr.contains("'1BOTS' is not a variable name"), "\(badName.stderr)")

        // --env wins over the environment.
        let stream = directory.appendingPathComponent("live.jsonl")
        let csv = directory.appendingPathComponent("live.csv")
        let finished = try await Self.run(
            [
                "swarm", script.path, "--env", "SKIRMISH_TEST_BOTS=3", "--out", out.path, "--out-stream", stream.path,
                "--out-csv", csv.path,
            ], environment: ["SKIRMISH_TEST_BOTS": "50"])
        #expect(finished.status == 0, "\(finished.stderr)")
        let summary = try RunSummary.load(path: out.appendingPathComponent("summary.json").path)
        #expect(summary.peakBots == 3)
        // The stream holds a line a second for the one persona, and its round trips add up to the summary's.
        let lines = try String(contentsOf: stream, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 2, "\(lines)")
        let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:] }
        #expect(objects.allSatisfy { $0["persona"] as? String == "chaser" && $0["run"] as? String == summary.run })
        let roundTrips = objects.reduce(0) { $0 + (($1["rtt"] as? [String: Any])?["count"] as? Int ?? 0) }
        #expect(
            UInt64(roundTrips) == summary.latency.rtt?.count,
            "stream \(roundTrips), summary \(String(describing: summary.latency.rtt))")
        let rows = try String(contentsOf: csv, encoding: .utf8).split(separator: "\n")
        #expect(rows.first?.hasPrefix("t,time,run,shard,persona,game,") == true)
        #expect(rows.count == lines.count + 1)
        #expect(finished.stdout.contains(stream.path) && finished.stdout.contains(csv.path), "\(finished.stdout)")
        // The report charts the latency distribution and each persona's p99 over time.
        let report = try String(contentsOf: out.appendingPathComponent("report.html"), encoding: .utf8)
        for chart in ["Latency by percentile", "Round-trip time p99 by persona"] {
            let start = try #require(report.range(of: "aria-label=\"\(chart)\""), "no \(chart) chart")
            let rest = report[start.upperBound...]
            let svg = rest[..<(rest.range(of: "</svg>")?.lowerBound ?? rest.endIndex)]
            // A line, or a dot where this short run has one point of it.
            #expect(svg.contains("<polyline") || svg.contains("<circle"), "\(chart)")
        }

        // A second run into the same folder is refused before it starts, unless told to replace it.
        let again = try await Self.run(
            ["swarm", script.path, "--out", out.path], environment: ["SKIRMISH_TEST_BOTS": "2"])
        #expect(again.status == 2)
        #expect(again.stderr.contains("already holds a run (run \(summary.run))"), "\(again.stderr)")
        #expect(again.stderr.contains("--overwrite"))
        let streamAgain = try await Self.run(
            [
                "swarm", script.path, "--out", directory.appendingPathComponent("other").path, "--out-stream",
                stream.path,
            ],
            environment: ["SKIRMISH_TEST_BOTS": "2"])
        #expect(streamAgain.status == 2)
        #expect(streamAgain.stderr.contains("--out-stream \(stream.path) already holds"), "\(streamAgain.stderr)")
        #expect(try RunSummary.load(path: out.appendingPathComponent("summary.json").path).run == summary.run)
        let replaced = try await Self.run(
            ["swarm", script.path, "--out", out.path, "--overwrite"], environment: ["SKIRMISH_TEST_BOTS": "2"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try RunSummary.load(path: out.appendingPathComponent("summary.json").path).peakBots == 2)
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

    /// A stderr nobody reads (a pipe already full) never stops a run or its stop: SIGTERM still ends it with the
    /// summary written and 143. A swarm whose log blocked on such a pipe ignored SIGTERM and wrote no summary.
    @Test(.timeLimit(.minutes(3))) func aStderrNobodyReadsNeverBlocksTheRunOrItsStop() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let port = try #require(LoopbackPort.free())
        let process = ChildProcess()
        process.executableURL = try Self.executable()
        process.arguments = [
            "swarm", root.appendingPathComponent("bots/quickstart.yaml").path, "--duration", "60s", "--out",
            directory.appendingPathComponent("out").path, "--plain-progress", "--log-level", "debug",
            "--metrics", "127.0.0.1:\(port)", "--metrics-linger", "0",
        ]
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stdout").path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
        // Stderr: a one-page pipe, filled before the process starts and never read.
        let err = Pipe()
        let end = err.fileHandleForWriting.fileDescriptor
        _ = fcntl(end, 1031, 4096) // F_SETPIPE_SZ
        let flags = fcntl(end, F_GETFL)
        _ = fcntl(end, F_SETFL, flags | O_NONBLOCK)
        let filler = [UInt8](repeating: 0x2E, count: 4096)
        while filler.withUnsafeBytes({ write(end, $0.baseAddress, $0.count) }) > 0 {}
        _ = fcntl(end, F_SETFL, flags)
        process.standardError = err
        try process.run()
        // The bots are playing once their series are on the run's /metrics.
        let deadline = ContinuousClock.now + .seconds(60)
        var playing = false
        while !playing, process.isRunning, ContinuousClock.now < deadline {
            playing =
                HTTPClient().get("http://127.0.0.1:\(port)/metrics").map {
                    String(decoding: $0.body, as: UTF8.self).contains("persona=\"chaser\"")
                } ?? false
            if !playing { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(playing, "the run started although nothing read its stderr")
        process.send(SIGTERM)
        let stop = ContinuousClock.now + .seconds(60)
        while process.isRunning, ContinuousClock.now < stop { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.send(SIGKILL)
            Issue.record("the swarm did not stop on SIGTERM with its stderr full")
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 143)
        let summary = directory.appendingPathComponent("out/summary.json")
        #expect(FileManager.default.fileExists(atPath: summary.path), "the summary is written")
        let stdout = (try? String(contentsOf: directory.appendingPathComponent("stdout"), encoding: .utf8)) ?? ""
        #expect(stdout.contains("stopped early"), "\(stdout)")
    }

    /// Every kind of bad input exits 2 with a message naming the input: flags argument-parser refuses, flags the
    /// run refuses, and a Kubernetes Job environment that names no shard.
    @Test(arguments: [
        (["--bots", "many"], [:], "--bots"),
        (["--bots", "0"], [:], "--bots"),
        // One socket per bot: five million bots need more open files than any process here may hold.
        (["--bots", "5000000"], [:], "open files"),
        (["--duration", "soon"], [:], "--duration"),
        // Refused with the reason, never run as something else or called a missing value.
        (["--loops", "0"], [:], "--loops 0: bots run on 1 to 256 event loops"),
        (["--seed", "-1"], [:], "'-1' is invalid for '--seed <seed>': a seed is a whole number"),
        (["--metrics", "127.0.0.1:70000"], [:], "the port '70000' is not a number from 0 to 65535"),
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
