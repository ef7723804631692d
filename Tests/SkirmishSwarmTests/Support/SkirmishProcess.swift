import Foundation
import SkirmishTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `skirmish` executable run as a person runs it: its own process (so its RSS and descriptors are its own),
/// its exit status, its files, signals sent to its PID.
struct SkirmishProcess {
    let process = ChildProcess()
    private let out = Pipe()
    private let err = Pipe()
    let started = ContinuousClock.now

    /// The executable built beside this test bundle (any scratch path), else under `.build`.
    static func executable() throws -> URL {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates: [URL] = []
        var directory = here.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("skirmish"))
            directory = directory.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates += [".build/debug/skirmish", ".build/release/skirmish"].map { root.appendingPathComponent($0) }
        for url in candidates where FileManager.default.isExecutableFile(atPath: url.path) { return url }
        Issue.record("no skirmish executable beside the tests or under .build; run `swift build --build-tests`")
        throw CocoaError(.fileNoSuchFile)
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    static func temporaryDirectory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Starts `skirmish arguments…` (or `executable arguments…`); stdout and stderr go to files in `logs` (a pipe left
    /// unread could fill up).
    init(_ arguments: [String], logs: URL, executable: String? = nil) throws {
        process.executableURL = try executable.map { URL(fileURLWithPath: $0) } ?? Self.executable()
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: logs.appendingPathComponent("stdout").path, contents: nil)
        _ = FileManager.default.createFile(atPath: logs.appendingPathComponent("stderr").path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: logs.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: logs.appendingPathComponent("stderr"))
        self.logs = logs
        try process.run()
    }

    private let logs: URL

    var stdout: String { (try? String(contentsOf: logs.appendingPathComponent("stdout"), encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: logs.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }

    /// Sends `signal` to this process's PID.
    func signal(_ number: Int32) { process.send(number) }

    /// Waits for the process to end, at most `limit`; kills it (and records an issue) past that. Returns the status.
    @discardableResult
    func wait(limit: Duration) async throws -> Int32 {
        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning {
            process.send(SIGKILL)
            Issue.record("skirmish \(process.arguments?.joined(separator: " ") ?? "") did not end within \(limit)")
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Waits until `condition` holds (checked every 100 ms) or `limit` passes; returns whether it held.
    static func waitUntil(limit: Duration, _ condition: () throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? condition()) == true { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try condition()
    }

    /// `summary.json` of a results folder as a dictionary.
    static func summary(in directory: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent("summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
