import Foundation
import SkirmishConformance
import SkirmishServer
import SkirmishTestSupport
import SkirmishWire
import Testing

/// `skirmish conformance` as a person runs it: the built executable, its lines and its exit status.
@Suite(.serialized)
struct CommandTests {
    @Test("exit 0 with PASS lines and the summary against the reference server")
    func passesWithZero() async throws {
        let run = try await ConformanceTests.withServer { server in
            let port = try #require(server.addresses.udp?.port)
            return try await runSkirmish([
                "conformance", "--target", "udp://127.0.0.1:\(port)", "--only", "handshake.vector", "--only",
                "session.join",
            ])
        }
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("PASS  handshake.vector  "))
        #expect(run.stdout.contains("PASS  session.join  "))
        #expect(run.stdout.contains("2 passed, 0 failed, 0 skipped"))
    }

    @Test("exit 1 with a FAIL line saying what was expected and seen when a rule is broken")
    func failsWithOne() async throws {
        let run = try await ConformanceTests.withProxy(.unmirrored) { target in
            try await runSkirmish([
                "conformance", "--target", "udp://127.0.0.1:\(target.port)", "--only", "puck.mirroring",
            ])
        }
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("FAIL  puck.mirroring  "))
        #expect(run.stdout.contains("expected A to see B's paddle at"))
        #expect(run.stdout.contains("0 passed, 1 failed, 0 skipped"))
    }

    @Test("exit 2 naming the input and the fix for a target that does not parse", arguments: ["foo://x", "udp://host"])
    func badTarget(_ text: String) async throws {
        let run = try await runSkirmish(["conformance", "--target", text])
        #expect(run.status == 2)
        #expect(run.stderr.contains("is not a target"))
        #expect(run.stderr.contains("udp://HOST:PORT"))
    }

    @Test("exit 2 naming --patience and its range for a patience below 1", arguments: ["0.5", "nan"])
    func badPatience(_ text: String) async throws {
        let run = try await runSkirmish(["conformance", "--target", "udp://127.0.0.1:4000", "--patience", text])
        #expect(run.status == 2)
        #expect(run.stderr.contains("--patience"))
        #expect(run.stderr.contains("from 1 to 100"))
    }

    @Test("--format junit and json: one document on stdout, the lines on stderr, the same exit status")
    func machineReadable() async throws {
        let runs = try await ConformanceTests.withProxy(.unmirrored) { target in
            var runs: [(status: Int32, stdout: String, stderr: String)] = []
            for format in ["junit", "json"] {
                runs.append(
                    try await runSkirmish([
                        "conformance", "--target", "udp://127.0.0.1:\(target.port)", "--only", "handshake.vector",
                        "--only", "puck.mirroring", "--format", format,
                    ]))
            }
            return runs
        }
        let junit = runs[0]
        #expect(junit.status == 1, "\(junit.stdout)\(junit.stderr)")
        #expect(junit.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "))
        #expect(junit.stdout.contains("tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\""))
        #expect(junit.stdout.contains("<testcase classname=\"conformance.handshake\" name=\"handshake.vector: "))
        #expect(junit.stdout.contains("<failure type=\"fail\" message=\"expected A to see B&apos;s paddle at"))
        #expect(!junit.stdout.contains("PASS  ") && junit.stderr.contains("FAIL  puck.mirroring  "))
        #expect(junit.stdout.components(separatedBy: "<testcase ").count - 1 == 2)
        #expect(junit.stdout.hasSuffix("  </testsuite>\n</testsuites>\n"))

        let json = runs[1]
        #expect(json.status == 1)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(document["passed"] as? Int == 1 && document["failed"] as? Int == 1)
        let checks = try #require(document["checks"] as? [[String: Any]])
        #expect(checks.map { $0["outcome"] as? String } == ["pass", "fail"])
        #expect((checks[1]["expected"] as? String)?.hasPrefix("A to see B's paddle at") == true)
    }

    @Test("exit 2 with one line, no usage text, for a target that does not answer")
    func unreachableTarget() async throws {
        let port = try #require(LoopbackPort.free())
        let run = try await runSkirmish(["conformance", "--target", "tcp://127.0.0.1:\(port)"])
        #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
        #expect(!run.stderr.contains("USAGE") && !run.stderr.contains("OPTIONS"), "\(run.stderr)")
        #expect(run.stderr.contains("--target tcp://127.0.0.1:\(port)"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("cannot connect: connection refused"), "the system's words, not NIO's error dump")
        #expect(!run.stderr.contains("SingleConnectionFailure"), "\(run.stderr)")
    }

    @Test("--help gives the run time the article gives and the suite measures")
    func helpGivesTheRunTime() async throws {
        let run = try await runSkirmish(["conformance", "--help"])
        #expect(run.status == 0)
        let udp = ConformanceSuite.usualSeconds(on: .udp)
        let tcp = ConformanceSuite.usualSeconds(on: .tcp)
        let help = run.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("about \(udp) s over UDP, \(tcp) s over TCP or WebSocket"), "\(run.stdout)")
        let article = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(
                    "Sources/SkirmishConformance/Documentation.docc/SkirmishConformance.md"),
            encoding: .utf8
        ).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(article.contains("about **\(udp) s over UDP and \(tcp) s over TCP or WebSocket**"))
    }

    @Test("--list names every check")
    func list() async throws {
        let run = try await runSkirmish(["conformance", "--list"])
        #expect(run.status == 0)
        for id in ["handshake.cookie", "reliable.relay", "session.resume", "hostile.input"] {
            #expect(run.stdout.contains(id))
        }
    }
}

/// Runs the built `skirmish` with `arguments` and waits (at most two minutes) for it to end.
private func runSkirmish(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    let process = ChildProcess()
    process.executableURL = try executable()
    process.arguments = arguments
    let logs = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: logs) }
    let out = logs.appendingPathComponent("stdout")
    let err = logs.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
    _ = FileManager.default.createFile(atPath: err.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    try process.run()
    let deadline = ContinuousClock.now + .seconds(120)
    while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    if process.isRunning {
        process.terminate()
        Issue.record("skirmish \(arguments.joined(separator: " ")) did not end within 120 s")
        // Waited for off the cooperative pool's threads: a graceful shutdown can take a moment.
        while process.isRunning { try await Task.sleep(for: .milliseconds(50)) }
    }
    let stdout = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
    let stderr = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
    return (process.terminationStatus, stdout, stderr)
}

/// The executable built beside this test bundle (any scratch path), else under `.build`.
private func executable() throws -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    var candidates: [URL] = []
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
