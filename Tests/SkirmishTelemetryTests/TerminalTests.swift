import Foundation
import SkirmishTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a person at the terminal sees from the real `skirmish` executable: the version, bad input refused before
/// anything starts, and a collector's failures on the live line while they last.
@Suite(.serialized) struct TerminalTests {
    @Test func versionNamesTheReleaseAndTheWireProtocol() async throws {
        let result = try await Command.run(try RealRun.executable().path, ["--version"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("skirmish "), "\(result.output)")
        #expect(result.output.contains("wire protocol 1"), "\(result.output)")
    }

    /// Bad push URLs, formats and addresses exit 2 at once, naming the input, before any server or bot starts.
    @Test(arguments: [
        (["--push", "http://127.0.0.1:9091/metrics job"], "space"),
        (["--push", "http://127.0.0.1:port/x", "--format", "vm"], "--push"),
        (["--push", "ftp://127.0.0.1:9091"], "http://"),
        (["--push", "http://127.0.0.1:9091", "--format", "carrier-pigeon"], "--format"),
        (["--push", "http://127.0.0.1:1234/hook"], "--format"),
        (["--metrics", "localhost"], "--metrics"),
        (["--metrics", "example.org:80"], "--metrics"),
        (["--run-id", "nightly run"], "--run-id"),
        (["--run-id", "a/b"], "--run-id"),
        (["--server-metrics", "http://127.0.0.1:9/metrics"], "--target"),
        (["--target", "udp://127.0.0.1:9", "--server-metrics", "http://127.0.0.1:9/a b"], "--server-metrics"),
    ])
    func badOptionsAreRefusedBeforeAnythingStarts(flags: [String], named: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-bad-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("script.yaml")
        try RealRun.oneBotScript.write(to: script, atomically: true, encoding: .utf8)
        let out = directory.appendingPathComponent("out")
        let result = try await Command.run(
            try RealRun.executable().path, ["swarm", script.path, "--out", out.path] + flags, timeout: 30)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains(named), "\(result.output)")
        #expect(!result.output.contains("embedded server"), "something started: \(result.output)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    /// A results folder that cannot be written is bad input at the start, not a failure after the whole run.
    @Test func anUnwritableResultsFolderIsRefusedAtTheStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-out-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("script.yaml")
        try RealRun.oneBotScript.write(to: script, atomically: true, encoding: .utf8)
        // A regular file where the folder should be: no user, root included, can create a folder inside it.
        let blocker = directory.appendingPathComponent("file")
        try Data("x".utf8).write(to: blocker)
        let result = try await Command.run(
            try RealRun.executable().path, ["swarm", script.path, "--out", blocker.appendingPathComponent("out").path],
            timeout: 30)
        #expect(result.status == 2, "\(result.output)")
        #expect(result.output.contains("--out"), "\(result.output)")
        #expect(!result.output.contains("embedded server"), "something started: \(result.output)")
    }

    /// Without `--run-id`, the run id comes from `SKIRMISH_RUN_ID` (the Kubernetes manifest sets it from the Job's
    /// name), so every pod of one Job labels its series with the same run.
    @Test func theRunIDComesFromTheEnvironment() async throws {
        let id = "job-" + UUID().uuidString.prefix(8).lowercased()
        let run = try await RealRun.run([], script: RealRun.oneBotScript, environment: ["SKIRMISH_RUN_ID": id])
        defer { run.remove() }
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try run.summary()["run"] as? String == id)
        let flagged = try await RealRun.run(
            ["--run-id", "flag-wins"], script: RealRun.oneBotScript, environment: ["SKIRMISH_RUN_ID": id])
        defer { flagged.remove() }
        #expect(try flagged.summary()["run"] as? String == "flag-wins")
    }

    /// The plain progress line says a collector is failing while it fails, and stops saying so once a push lands.
    @Test func theLiveLineShowsCollectorFailuresUntilAPushLands() async throws {
        let port = try Collector.freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-live-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("script.yaml")
        // Long enough for a slow machine to start the collector mid-run; the test ends it with SIGINT.
        try RealRun.script.replacingOccurrences(of: "{hold: {for: 8s}}", with: "{hold: {for: 5m}}")
            .write(to: script, atomically: true, encoding: .utf8)
        let stderrFile = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        let process = ChildProcess()
        process.executableURL = try RealRun.executable()
        process.arguments = [
            "swarm", script.path, "--out", directory.appendingPathComponent("out").path, "--plain-progress",
            "--push", "http://127.0.0.1:\(port)/api/v1/import/prometheus", "--push-interval", "1",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        defer {
            if process.isRunning { process.send(SIGKILL) }
            process.waitUntilExit()
        }
        func lines() -> [String] {
            ((try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        let failing = await Collector.poll(timeout: 60) { () -> Bool? in
            lines().contains { $0.contains("collector failing: vm@127.0.0.1:\(port) connect") } ? true : nil
        }
        #expect(failing == true, "\(lines())")
        let collector = try await Collector(.victoriaMetrics, port: port)
        defer { collector.stop() }
        // A progress line after the failing ones that no longer mentions the collector.
        let cleared = await Collector.poll(timeout: 60) { () -> Bool? in
            let all = lines()
            guard let lastFailing = all.lastIndex(where: { $0.contains("collector failing") }) else { return nil }
            return all[(lastFailing + 1)...].contains { $0.contains("bots") && !$0.contains("collector") } ? true : nil
        }
        #expect(cleared == true, "\(lines())")
        process.interrupt()
        process.waitUntilExit()
        #expect(process.terminationStatus == 130, "\(lines())")
    }
}
