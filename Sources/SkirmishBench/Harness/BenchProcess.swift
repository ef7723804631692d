import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A child process of a benchmark: `skirmish serve` or `skirmish swarm`, pinned to one CPU core with `taskset`, with
/// its CPU time and memory read from `/proc` while it runs.
package final class BenchProcess {
    package let process = Process()
    package let name: String
    private let output: Pipe?
    private var pending = ""
    package private(set) var pinned = false

    /// Starts `skirmish arguments…` on `core` (unpinned when `taskset` is missing), under the real-time round-robin
    /// scheduler when `realtime` (`chrt -r`: threads of one priority share the core in time slices, so a saturated
    /// event loop cannot starve the process's other threads); stdout is kept for ``readLine(prefix:timeout:)`` when `captureOutput`,
    /// stderr goes to `log`.
    package init(name: String, arguments: [String], core: Int?, realtime: Bool, captureOutput: Bool, log: URL) throws {
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
    package static func terminateAll() {
        for pid in running.withLock({ $0 }) { kill(pid, SIGTERM) }
    }

    package var pid: Int32 { process.processIdentifier }
    package var isRunning: Bool { process.isRunning }

    /// The first stdout line starting with `prefix`, within `timeout`.
    package func readLine(prefix: String, timeout: Duration) throws -> String {
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
    package func cpuSeconds() -> Double? { cpuTimes().map { $0.user + $0.system } }

    /// The process's CPU time so far, in seconds, split into user space and the kernel (`utime`, `stime`).
    package func cpuTimes() -> (user: Double, system: Double)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user / ticks, system / ticks)
    }

    /// A `/proc/<pid>/status` figure in KiB (`VmRSS`, `VmHWM`).
    package func statusKiB(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// Sends SIGTERM and waits for the exit, SIGKILL after `grace`.
    package func stop(grace: Duration = .seconds(10)) async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + grace
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    package static func executablePath() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { throw BenchError("cannot find this executable (/proc/self/exe)") }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Counters read from the machine while a benchmark runs.
package enum MachineCounters {
    /// The 1-minute load average: other work on the machine skews every figure.
    package static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return 0 }
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    /// The process's hard open-file limit.
    package static func openFileHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        return Int(clamping: limit.rlim_max)
    }
}
