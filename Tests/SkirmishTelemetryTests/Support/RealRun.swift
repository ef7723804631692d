import Foundation
import SkirmishTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A short real run: the built `skirmish` executable plays a small mixed swarm (Puck, Snap, Suns) against its
/// embedded server and pushes to the collectors a test started, as a user's run would.
///
/// Dashboard and sharding tests read what this leaves in real collectors, never fixture data that fills every metric.
struct RealRun {
    /// A script short enough for a busy 2-core machine: every game, a hold (so gauges are non-zero mid-run).
    static let script = """
        name: dashboards
        profile:
          - {ramp: {to: 12, over: 2s}}
          - {hold: {for: 8s}}
        personas:
          - {name: chaser, weight: 2, game: puck, behavior: chaser, input_rate: 30hz}
          - {name: cards, weight: 2, game: snap, seats: 2, snap_reaction: {mean: 300ms, stddev: 50ms}}
          - {name: suns, weight: 2, game: suns}

        """

    /// Two Puck bots for 3 s: for tests about the process, not the figures.
    static let oneBotScript = """
        name: one-bot
        profile: [{ramp: {to: 2, over: 1s}}, {hold: {for: 2s}}]
        personas: [{name: chaser, weight: 1, game: puck, behavior: chaser}]

        """

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL
    let status: Int32
    let stdout: String
    let stderr: String
    let started: Date
    let ended: Date

    var out: URL { directory.appendingPathComponent("out") }

    /// Runs `skirmish swarm <script> arguments…` to its end (at most `limit` seconds) in a fresh temporary folder;
    /// results go to `out`. `environment` is added to this process's.
    static func run(
        _ arguments: [String], script: String = RealRun.script, environment: [String: String] = [:],
        limit: TimeInterval = 180
    ) async throws -> RealRun {
        try await offPool { try runBlocking(arguments, script: script, environment: environment, limit: limit) }
    }

    private static func runBlocking(
        _ arguments: [String], script: String, environment: [String: String], limit: TimeInterval
    ) throws -> RealRun {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-run-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptFile = directory.appendingPathComponent("script.yaml")
        try script.write(to: scriptFile, atomically: true, encoding: .utf8)
        let process = ChildProcess()
        process.executableURL = try executable()
        process.arguments =
            ["swarm", scriptFile.path, "--out", directory.appendingPathComponent("out").path, "--plain-progress"]
            + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdoutFile = directory.appendingPathComponent("stdout")
        let stderrFile = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        let started = Date()
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        try process.run()
        if finished.wait(timeout: .now() + limit) == .timedOut {
            process.send(SIGKILL)
            process.waitUntilExit()
            throw Failure(description: "skirmish swarm did not end within \(limit) s")
        }
        process.waitUntilExit()
        return RealRun(
            directory: directory, status: process.terminationStatus,
            stdout: (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "", started: started, ended: Date())
    }

    /// Removes the run's folder.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// `summary.json` as a dictionary.
    func summary() throws -> [String: Any] {
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        guard let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: "summary.json is not an object")
        }
        return json
    }

    /// The `skirmish` executable built beside this test bundle (any scratch path), else under `.build`.
    static func executable() throws -> URL {
        var candidates: [URL] = []
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("skirmish"))
            directory = directory.deletingLastPathComponent()
        }
        candidates += [".build/debug/skirmish", ".build/release/skirmish"].map {
            repositoryRoot.appendingPathComponent($0)
        }
        for url in candidates where FileManager.default.isExecutableFile(atPath: url.path) { return url }
        throw Failure(
            description: "no skirmish executable beside the tests or under .build; run `swift build --build-tests`")
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }
}
