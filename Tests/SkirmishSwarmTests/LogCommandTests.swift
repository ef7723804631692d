import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built binary's logs as a collector reads them: with `--log-format json` every stderr line is one JSON object
/// (notes and progress included), with the run's id and the events an operator needs.
@Suite(.serialized) struct LogCommandTests {
    /// Every stderr line as a JSON object; records an issue for a line that is not one.
    static func objects(_ stderr: String) throws -> [[String: Any]] {
        var objects: [[String: Any]] = []
        for line in stderr.split(separator: "\n", omittingEmptySubsequences: true) {
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let object = parsed else {
                Issue.record("not a JSON object: \(line)")
                continue
            }
            for field in ["ts", "level", "label", "msg"] { #expect(object[field] is String, "\(field) in \(line)") }
            let ts = object["ts"] as? String ?? ""
            #expect(ts.count == 24 && ts.hasSuffix("Z") && ts.dropFirst(19).hasPrefix("."), "\(ts)")
            objects.append(object)
        }
        return objects
    }

    /// Sends `count` datagrams of 16 × 0xFF (a wrong magic) to 127.0.0.1:`port`.
    static func sendGarbage(count: Int, to port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let datagram = [UInt8](repeating: 0xFF, count: 16)
        for _ in 0..<count {
            let sent = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            #expect(sent == datagram.count)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func serveWritesOneJSONObjectPerLine() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("serve-json-logs")
        let serve = try SkirmishProcess(
            [
                "serve", "--udp", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0", "--log-format",
                "json",
            ], logs: directory)
        let listening = try await SkirmishProcess.waitUntil(limit: .seconds(30)) {
            serve.stdout.contains("listening http://")
        }
        try #require(listening, "\(serve.stderr)")
        let port = try ServeLimitTests.port("listening udp://", in: serve.stdout)
        try Self.sendGarbage(count: 30, to: port)
        let rejected = try await SkirmishProcess.waitUntil(limit: .seconds(30)) {
            serve.stderr.contains("\"rejected input\"")
        }
        #expect(rejected, "\(serve.stderr)")
        serve.signal(SIGTERM)
        #expect(try await serve.wait(limit: .seconds(30)) == 0, "\(serve.stderr)")

        let objects = try Self.objects(serve.stderr)
        let started = try #require(objects.first { $0["msg"] as? String == "server started" })
        #expect(started["label"] as? String == "skirmish.server")
        #expect((started["run"] as? String)?.hasPrefix("serve-") == true)
        #expect(started["listen.udp"] as? String == "127.0.0.1:\(port)")
        // The 30 rejections are in one line (or, should a once-a-second check fall inside the burst, in the lines
        // the window and the shutdown allow), each line saying how many it stands for.
        let lines = objects.filter { $0["msg"] as? String == "rejected input" }
        #expect(!lines.isEmpty && lines.count <= 2, "\(lines)")
        #expect(lines.compactMap { ($0["count"] as? String).flatMap(Int.init) }.reduce(0, +) == 30, "\(lines)")
        for line in lines {
            #expect(line["level"] as? String == "notice")
            #expect(line["reason"] as? String == "bad_magic")
            let count = (line["count"] as? String).flatMap(Int.init) ?? 0
            #expect(line["suppressed"] as? String == "\(count - 1)")
            #expect(line["run"] as? String == started["run"] as? String)
        }
        #expect(objects.contains { $0["msg"] as? String == "server stopped" })
        // The notes are log lines too (the open-file limit, the signal).
        #expect(
            objects.contains {
                $0["label"] as? String == "skirmish" && ($0["msg"] as? String)?.contains("SIGTERM") == true
            })
    }

    @Test(.timeLimit(.minutes(2)))
    func aSwarmRunLogsItsStartAndEndAsJSONAndNothingElseOnStderr() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("swarm-json-logs")
        // The quickstart's personas with only the threshold a busy machine cannot break (desyncs): its latency limit
        // would fail the run, and so the exit status, whenever the machine is loaded, which is not what this tests.
        let quickstart = try String(
            contentsOf: SkirmishProcess.repositoryRoot.appendingPathComponent("bots/quickstart.yaml"), encoding: .utf8)
        let script = directory.appendingPathComponent("quickstart-logs.yaml")
        try (quickstart[..<quickstart.range(of: "thresholds:")!.lowerBound] + "thresholds:\n  desyncs: \"== 0\"\n")
            .write(to: script, atomically: true, encoding: .utf8)
        let swarm = try SkirmishProcess(
            [
                "swarm", script.path,
                "--duration", "3s", "--bots", "6", "--run-id", "json-logs", "--out",
                directory.appendingPathComponent("out").path, "--log-format", "json", "--log-level", "debug",
            ], logs: directory)
        #expect(try await swarm.wait(limit: .seconds(90)) == 0, "\(swarm.stderr)")
        let objects = try Self.objects(swarm.stderr)
        let started = try #require(objects.first { $0["msg"] as? String == "swarm started" })
        #expect(started["run"] as? String == "json-logs" && started["shard"] as? String == "0")
        #expect(started["bots.peak"] as? String == "6")
        #expect(objects.contains { $0["msg"] as? String == "swarm finished" && $0["run"] as? String == "json-logs" })
        #expect(objects.contains { $0["msg"] as? String == "server started" && $0["run"] as? String == "json-logs" })
        // At debug every line names the file and line that logged it.
        #expect(objects.allSatisfy { ($0["source"] as? String)?.contains(".swift:") == true })
    }
}
