import Foundation
import SkirmishRun
import SkirmishSwarm
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Ports, threads and deadlines: what a test needs to show that a command left nothing running.
enum Loopback {
    /// A listening TCP socket on a free 127.0.0.1 port, held until ``Held/close()``: a port someone else has taken.
    final class Held: Sendable {
        let port: Int
        private let fd: Int32

        init() throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            port = try Loopback.bind(fd, port: 0)
            guard listen(fd, 4) == 0 else { throw CocoaError(.fileWriteUnknown) }
        }

        func close() { _ = Glibc.close(fd) }
    }

    /// Whether this process can bind `port` on 127.0.0.1 itself right now (TCP, or UDP), without SO_REUSEADDR.
    static func isFree(_ port: Int, udp: Bool = false) -> Bool {
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        defer { _ = Glibc.close(fd) }
        return (try? bind(fd, port: port)) != nil
    }

    /// A port that was free a moment ago (bound and released), for a listener the test names in advance.
    static func freePort(udp: Bool = false) throws -> Int {
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        defer { _ = Glibc.close(fd) }
        return try bind(fd, port: 0)
    }

    /// Which of `threads` (kernel thread ids) are still alive in this process.
    static func alive(_ threads: [Int32]) -> [Int32] {
        let tasks = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { Int32($0) })
        return threads.filter(tasks.contains)
    }

    /// Polls `condition` every 50 ms until it holds or `limit` passes; returns whether it held.
    ///
    /// The limit is a guarantee's, not a speed's: under `make test-under-load`, suites that wait on child processes
    /// hold the cooperative pool's two threads for a while, and a run's first part was seen to wait 45 s for one.
    static func eventually(within limit: Duration = .seconds(120), _ condition: () async throws -> Bool) async rethrows
        -> Bool
    {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    private static func bind(_ fd: Int32, port: Int) throws -> Int {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw CocoaError(.fileWriteUnknown) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// A console that keeps what a command wrote.
final class RecordingConsole: Sendable {
    private let state = Mutex<(lines: [String], notes: [String], updates: Int, ended: Bool)>(([], [], 0, false))

    var lines: [String] { state.withLock { $0.lines } }
    var notes: [String] { state.withLock { $0.notes } }
    var updates: Int { state.withLock { $0.updates } }
    var progressEnded: Bool { state.withLock { $0.ended } }

    var console: RunConsole {
        RunConsole(
            line: { line in self.state.withLock { $0.lines.append(line) } },
            note: { note in self.state.withLock { $0.notes.append(note) } },
            progress: { _, _ in self.state.withLock { $0.updates += 1 } },
            progressEnd: { self.state.withLock { $0.ended = true } })
    }
}
