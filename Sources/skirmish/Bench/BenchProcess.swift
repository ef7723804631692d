import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process of a benchmark: `skirmish serve` or `skirmish swarm`, pinned to one CPU core with `taskset`, with
/// its CPU time and memory read from `/proc` while it runs.
final class BenchProcess {
    let process = Process()
    let name: String
    private let output: Pipe?
    private var pending = ""
    private(set) var pinned = false

    /// Starts `skirmish arguments…` on `core` (unpinned when `taskset` is missing), under the real-time round-robin
    /// scheduler when `realtime` (`chrt -r`: threads of one priority share the core in time slices, so a saturated
    /// event loop cannot starve the process's other threads); stdout is kept for ``readLine(prefix:timeout:)`` when `captureOutput`,
    /// stderr goes to `log`.
    init(name: String, arguments: [String], core: Int?, realtime: Bool, captureOutput: Bool, log: URL) throws {
        self.name = name
        var command = [try Self.executablePath()] + arguments
        let taskset = "/usr/bin/taskset"
        if let core, FileManager.default.isExecutableFile(atPath: taskset) {
            command = [taskset, "-c", "\(core)"] + command
            pinned = true
        }
        let chrt = "/usr/bin/chrt"
        if realtime {
            guard FileManager.default.isExecutableFile(atPath: chrt) else {
                throw BenchError("--realtime needs \(chrt) (util-linux)")
            }
            command = [chrt, "-r", "10"] + command
        }
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        guard FileManager.default.createFile(atPath: log.path, contents: nil) else {
            throw BenchError("cannot create the log file \(log.path)")
        }
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardError = logHandle
        if captureOutput {
            let pipe = Pipe()
            process.standardOutput = pipe
            output = pipe
        } else {
            process.standardOutput = logHandle
            output = nil
        }
        try process.run()
        Self.running.withLock { _ = $0.insert(process.processIdentifier) }
        process.terminationHandler = { process in
            Self.running.withLock { _ = $0.remove(process.processIdentifier) }
        }
    }

    /// Children still running, so a signal to the benchmark can take them down with it.
    private static let running = Mutex<Set<Int32>>([])

    /// Stops every child still running (SIGTERM): called when the benchmark itself is told to stop, so no server
    /// is left behind holding a core.
    static func terminateAll() {
        for pid in running.withLock({ $0 }) { kill(pid, SIGTERM) }
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    /// The first stdout line starting with `prefix`, within `timeout`.
    func readLine(prefix: String, timeout: Duration) throws -> String {
        guard let output else { throw BenchError("\(name): its output is not captured") }
        let handle = output.fileHandleForReading
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            // Lines already read but not yet asked for stay in `pending` for the next call.
            while let newline = pending.firstIndex(of: "\n") {
                let line = String(pending[..<newline])
                pending.removeSubrange(...newline)
                if line.hasPrefix(prefix) { return line }
            }
            let data = handle.availableData
            if data.isEmpty { break }
            pending += String(decoding: data, as: UTF8.self)
        }
        throw BenchError("\(name) printed no `\(prefix)` line within \(timeout)")
    }

    /// CPU seconds (user + system, every thread) so far; `nil` once the process is gone.
    func cpuSeconds() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A `/proc/<pid>/status` figure in KiB (`VmRSS`, `VmHWM`).
    func statusKiB(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Sends SIGTERM and waits for the exit, SIGKILL after `grace`.
    func stop(grace: Duration = .seconds(10)) async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw BenchError("cannot find this executable (/proc/self/exe)") }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Counters read from the machine while a benchmark runs.
enum MachineCounters {
    /// The 1-minute load average: other work on the machine skews every figure.
    static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return 0 }
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    /// The process's hard open-file limit.
    static func openFileHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        return Int(clamping: limit.rlim_max)
    }
}

/// A blocking `GET` of a Prometheus text endpoint on loopback, and sums over its samples.
struct PrometheusText {
    var text: String

    /// Fetches `http://127.0.0.1:<port><path>` (HTTP/1.1, `Connection: close`), within 5 s.
    static func fetch(port: Int, path: String = "/metrics") throws -> PrometheusText {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchError("socket(): \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw BenchError("cannot reach 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(socket, &chunk, chunk.count, 0)
            if count <= 0 { break }
            response += chunk[..<count]
            if let body = Self.completeBody(response) { return PrometheusText(text: body) }
        }
        guard let body = Self.completeBody(response, atEOF: true) else {
            throw BenchError("127.0.0.1:\(port)\(path) answered an incomplete HTTP response")
        }
        return PrometheusText(text: body)
    }

    private static func completeBody(_ bytes: [UInt8], atEOF: Bool = false) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<split.lowerBound].lowercased()
        let body = String(text[split.upperBound...])
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        {
            return body.utf8.count >= length ? body : nil
        }
        return atEOF ? body : nil
    }

    /// The sum of every sample of `name` whose labels contain each of `labels` (`reason="rate_limited"`).
    func sum(_ name: String, labels: [String] = []) -> Double {
        var total = 0.0
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let rest = line.dropFirst(name.count)
            guard rest.first == "{" || rest.first == " " else { continue }
            guard labels.allSatisfy({ rest.contains($0) }) else { continue }
            // `name{labels} value [timestamp]`: the value is the first field after the labels.
            let afterLabels = rest.first == "{" ? rest[(rest.range(of: "} ")?.upperBound ?? rest.endIndex)...] : rest
            guard let field = afterLabels.split(separator: " ").first, let value = Double(field) else { continue }
            total += value
        }
        return total
    }
}
