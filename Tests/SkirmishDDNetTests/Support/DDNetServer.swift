import Foundation
import Glibc
import SkirmishTestSupport

/// Debian's `DDNet-Server` started on a free loopback port in a temporary directory, for the tests that prove the
/// plug-in against the real peer; stopped by its PID.
///
/// Readiness and players' arrivals are read from its output (`server name is` once the socket is bound,
/// `team_join player='ID:name'` as a player enters), waited for with deadlines, never with sleeps.
final class DDNetServer {
    /// Where Debian installs it.
    static let executable = "/usr/games/DDNet-Server"

    /// Whether the server is installed (the tests need `ddnet-server` and `ddnet-data`).
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    let port: UInt16
    let directory: URL
    private let process: ChildProcess
    let output: OutputLog

    /// Starts a server with `settings` (console commands) besides the loopback ones; throws when it does not
    /// report a bound socket within `timeout`.
    init(settings: [String] = [], timeout: Duration = .seconds(30)) throws {
        // Never skipped: `make test` installs the server (TEST_DEPS), so its absence is a failure that says so.
        guard Self.isInstalled else {
            throw ServerError(
                message: "no DDNet-Server at \(Self.executable): run `make test-deps` "
                    + "(or apt-get install ddnet-server ddnet-data)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ddnet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Keep every file it writes (logs, its SQLite file, teehistorian) in the temporary directory.
        try "add_path $CURRENTDIR\nadd_path $DATADIR\n".write(
            to: directory.appendingPathComponent("storage.cfg"), atomically: true, encoding: .utf8)
        var lastError = "no attempt"
        for _ in 0..<5 {
            let port = try Self.freePort()
            let config =
                ([
                    "sv_ipv4only 1", "bindaddr 127.0.0.1", "sv_port \(port)", "sv_register 0", "sv_map dm1",
                    "sv_max_clients 64", "sv_max_clients_per_ip 64",
                    // `team_join player=...` is printed at `OUTPUT_LEVEL_DEBUG`, which the log calls trace.
                    "loglevel 4",
                ] + settings).joined(separator: ";")
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: Self.executable)
            process.arguments = [config]
            process.currentDirectoryURL = directory
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            process.standardInput = FileHandle.nullDevice
            let output = OutputLog()
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                    output.finish()
                } else {
                    output.append(data)
                }
            }
            try process.run()
            // The server moves on to the next port when its own is taken; that is a failed start here.
            let line = output.waitForLine(timeout: timeout) {
                $0.contains("server name is") || $0.contains("couldn't open socket")
            }
            if let line, line.contains("server name is") {
                self.port = port
                self.process = process
                self.output = output
                return
            }
            lastError = line ?? "no readiness line in \(timeout)"
            Self.stop(process)
        }
        throw ServerError(message: "DDNet-Server did not start: \(lastError)")
    }

    /// Stops the server by its PID (SIGTERM, then SIGKILL after 5 s) and removes its directory.
    func stop() {
        Self.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }

    private static func stop(_ process: ChildProcess) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning && ContinuousClock.now < deadline { usleep(10_000) }
        process.send(SIGKILL)
    }

    /// A UDP port on 127.0.0.1 that was free a moment ago.
    static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError(message: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw ServerError(message: "bind: errno \(errno)") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw ServerError(message: "getsockname: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    struct ServerError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

/// The server's output, line by line, with a wait for a line that matches.
///
/// `@unchecked Sendable`: every stored property is read and written only while `condition` is locked.
final class OutputLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending = Data()
    private var lines: [String] = []
    private var finished = false

    func append(_ data: Data) {
        condition.lock()
        defer { condition.unlock() }
        pending.append(data)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
            pending.removeSubrange(pending.startIndex...newline)
        }
        condition.broadcast()
    }

    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Every line so far.
    var all: [String] {
        condition.lock()
        defer { condition.unlock() }
        return lines
    }

    /// The first line (old or new) that satisfies `match`, waiting up to `timeout`; `nil` when none came.
    func waitForLine(timeout: Duration, _ match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout.seconds)
        condition.lock()
        defer { condition.unlock() }
        var checked = 0
        while true {
            while checked < lines.count {
                if match(lines[checked]) { return lines[checked] }
                checked += 1
            }
            if finished || !condition.wait(until: deadline) { return nil }
        }
    }

    /// Whether some line so far contains `needle` (without waiting: for conditions checked while a loop runs).
    func contains(_ needle: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return lines.contains { $0.contains(needle) }
    }

    /// Waits until every one of `needles` appears in some line; returns those still missing at the deadline.
    func waitForAll(_ needles: [String], timeout: Duration) -> [String] {
        let deadline = Date().addingTimeInterval(timeout.seconds)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let missing = needles.filter { needle in !lines.contains { $0.contains(needle) } }
            if missing.isEmpty || finished || !condition.wait(until: deadline) {
                return needles.filter { needle in !lines.contains { $0.contains(needle) } }
            }
        }
    }
}

extension sockaddr_in {
    /// 127.0.0.1:`port`.
    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
