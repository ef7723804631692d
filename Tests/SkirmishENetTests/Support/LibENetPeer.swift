import Foundation
import SkirmishTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The libenet peer of `Peer/enet_peer.c`, compiled by the test run with `gcc … -lenet` into a temporary folder and
/// started as a process: a real implementation nobody here wrote, bound to 127.0.0.1 on a free port.
final class LibENetPeer {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The compiled peer, built once per test process.
    static let binary: Result<String, Failure> = compile()

    private static func compile() -> Result<String, Failure> {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peer/enet_peer.c").path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "skirmish-enet-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return .failure(Failure(description: "cannot create \(directory.path): \(error)"))
        }
        let output = directory.appendingPathComponent("enet-peer").path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gcc", "-O1", "-o", output, source, "-lenet"]
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            return .failure(Failure(description: "cannot run gcc: \(error)"))
        }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(
                Failure(description: "gcc could not build the libenet peer (is libenet-dev installed?): \(message)"))
        }
        return .success(output)
    }

    private let process = ChildProcess()
    private let input = Pipe()
    private let output = Pipe()
    private var pending: [UInt8] = []
    /// Every line it printed so far.
    private(set) var lines: [String] = []
    /// The port it listens on (0 in capture mode).
    private(set) var port: UInt16 = 0

    /// A write to the stdin of a peer that just exited must fail with EPIPE, not kill the test process.
    private static let brokenPipesIgnored: Bool = {
        _ = signal(SIGPIPE, SIG_IGN)
        return true
    }()

    /// Starts the peer with `arguments`; in server mode, waits (up to 20 s) for it to print its port.
    init(_ arguments: [String], server: Bool = true) throws {
        precondition(Self.brokenPipesIgnored)
        let binary = try Self.binary.get()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let descriptor = output.fileHandleForReading.fileDescriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        guard server else { return }
        guard let line = waitForLine(within: .seconds(20), where: { $0.hasPrefix("port ") }),
            let port = UInt16(line.dropFirst(5))
        else { throw Failure(description: "the libenet peer did not print its port: \(lines)") }
        self.port = port
    }

    deinit {
        if process.isRunning {
            command("quit")
            let deadline = ContinuousClock.now + .seconds(5)
            while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            if process.isRunning { process.send(SIGKILL) }
        }
        process.waitUntilExit()
    }

    /// The descriptor of its standard output, for a driver's `poll`.
    var outputDescriptor: Int32 { output.fileHandleForReading.fileDescriptor }

    /// Sends one command line.
    func command(_ text: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((text + "\n").utf8))
    }

    /// Reads what it printed since the last call (never blocks).
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(outputDescriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            pending += buffer[0..<count]
        }
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[..<newline], as: UTF8.self))
            pending.removeSubrange(...newline)
        }
    }

    /// Waits for a line matching `condition` among those from index `after` on (polling its output), or `nil` after
    /// `limit`.
    func waitForLine(within limit: Duration, after: Int = 0, where condition: (String) -> Bool) -> String? {
        let deadline = ContinuousClock.now + limit
        var seen = after
        while true {
            drain()
            if let line = lines[seen...].first(where: condition) { return line }
            seen = lines.count
            guard ContinuousClock.now < deadline else { return nil }
            var descriptor = pollfd(fd: outputDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 50)
        }
    }

    /// Asks for its counters and returns them: `received`, `receivedBytes` and `sent`, by `mode/chN`, and `totals`:
    /// `connects`, `disconnects`, and the 'Q' stream's `inOrder` and `outOfOrder`.
    func stats(within limit: Duration = .seconds(20)) throws -> [String: [String: Int]] {
        let before = lines.count
        command("stats")
        guard let line = waitForLine(within: limit, after: before, where: { $0.hasPrefix("stats ") }) else {
            throw Failure(description: "the libenet peer did not report its counters: \(lines.suffix(5))")
        }
        let json = try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any] ?? [:]
        var result: [String: [String: Int]] = [:]
        for key in ["received", "receivedBytes", "sent"] { result[key] = json[key] as? [String: Int] ?? [:] }
        result["totals"] = json.compactMapValues { $0 as? Int }
        return result
    }

    /// Whether the process ended.
    var hasExited: Bool { !process.isRunning }
}
