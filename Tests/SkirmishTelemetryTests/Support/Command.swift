import Foundation
import SkirmishTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a short-lived tool (promtool, python3) and captures its output, killing it after a deadline.
enum Command {
    struct Result {
        let status: Int32
        let output: String
    }

    static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 60) async throws -> Result {
        try await offPool { try runBlocking(executable, arguments, timeout: timeout) }
    }

    static func runBlocking(_ executable: String, _ arguments: [String], timeout: TimeInterval) throws
        -> Result
    {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-cmd-\(UUID())")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let handle = try FileHandle(forWritingTo: outputFile)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.send(SIGKILL) }
        process.waitUntilExit()
        try handle.close()
        let output = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus, output: output)
    }
}

/// A stand-in collector in Python: answers `500` to the first N requests (or never answers, in `slow` mode), then
/// `204`, and keeps the last body it accepted in a file.
final class StubCollector {
    static let script = """
        import http.server, sys, time
        port, failures, mode, last = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
        seen = [0]
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args): pass
            def handle_one(self):
                body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
                seen[0] += 1
                if mode == 'slow':
                    time.sleep(30)
                if seen[0] <= failures:
                    message = b'boom: partial write'
                    self.send_response(500); self.send_header('Content-Length', str(len(message))); self.end_headers()
                    self.wfile.write(message); return
                open(last, 'wb').write(body)
                self.send_response(204); self.end_headers()
            do_POST = do_PUT = handle_one
        http.server.ThreadingHTTPServer(('127.0.0.1', port), Handler).serve_forever()
        """

    let port: Int
    let lastBody: URL
    private let process: ChildProcess

    init(failures: Int, slow: Bool = false) async throws {
        port = try Collector.freePort()
        lastBody = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-stub-\(UUID())")
        process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", StubCollector.script, String(port), String(failures), slow ? "slow" : "ok", lastBody.path,
        ]
        try process.run()
        let ready = await Collector.poll(timeout: 10) { () -> Bool? in
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(socketFD) }
            let connected = LoopbackPort.at(port) { connect(socketFD, $0, $1) } == 0
            return connected ? true : nil
        }
        guard ready == true else { throw Collector.Failure(description: "the Python stub collector did not start") }
    }

    deinit {
        if process.isRunning {
            process.send(SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: lastBody)
    }

    var lastAccepted: String? {
        try? String(contentsOf: lastBody, encoding: .utf8)
    }
}
