import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The built `skirmish` run as people run it: each command's service group owns SIGINT and SIGTERM, a part that cannot
/// start ends the command with a clear message and status 2, and a second signal does not wait for the clean stop.
@Suite struct LifecycleCommandTests {
    static var quickstart: String { SkirmishProcess.repositoryRoot.appendingPathComponent("bots/quickstart.yaml").path }

    /// A listening TCP socket on a free loopback port, closed by the caller: a port someone else holds.
    static func holdPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        try #require(bound == 0 && listen(fd, 4) == 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// `--metrics` on a taken port: the embedded server started first and is stopped again, nothing is written, and
    /// the command exits 2 with the flag and the fix.
    @Test(.timeLimit(.minutes(2))) func aTakenMetricsPortIsBadInputAndNoRunStarts() async throws {
        let held = try Self.holdPort()
        defer { close(held.fd) }
        let directory = try SkirmishProcess.temporaryDirectory("lifecycle-metrics")
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let swarm = try SkirmishProcess(
            ["swarm", Self.quickstart, "--duration", "5s", "--metrics", "127.0.0.1:\(held.port)", "--out", out.path],
            logs: directory)
        let status = try await swarm.wait(limit: .seconds(60))
        #expect(status == 2, "\(swarm.stderr)")
        #expect(swarm.stderr.contains("--metrics 127.0.0.1:\(held.port): cannot listen there"), "\(swarm.stderr)")
        #expect(swarm.stderr.contains("pick a free port or 127.0.0.1:0"))
        #expect(!swarm.stderr.contains("bots peak"), "no bot should start")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("summary.json").path))
    }

    /// A second Ctrl-C while the first is being handled (here: a final push to a collector that never answers) ends
    /// the process at once with 130, before the results are written.
    @Test(.timeLimit(.minutes(2))) func aSecondSignalEndsTheRunAtOnce() async throws {
        let collector = try Self.holdPort() // listens, never accepts: every push waits for its timeout
        defer { close(collector.fd) }
        let directory = try SkirmishProcess.temporaryDirectory("lifecycle-twice")
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let swarm = try SkirmishProcess(
            [
                "swarm", Self.quickstart, "--duration", "60s", "--plain-progress", "--out", out.path, "--push",
                "http://127.0.0.1:\(collector.port)/api/v1/import/prometheus", "--push-interval", "60",
            ], logs: directory)
        let underWay = try await SkirmishProcess.waitUntil(limit: .seconds(60)) { swarm.stderr.contains("bots peak") }
        try #require(underWay, "\(swarm.stderr)")
        // The second Ctrl-C must come while the first is handled, that is within the final push's 15 s. A plain
        // thread sends it as soon as the run says it is stopping: on a busy machine Swift's cooperative pool can stall
        // for longer than that, and a second signal sent from it could come after the results were written.
        let second = SecondSignal(
            pid: swarm.process.processIdentifier, stderr: directory.appendingPathComponent("stderr"))
        swarm.signal(SIGINT)
        let status = try await swarm.wait(limit: .seconds(60))
        #expect(second.sent, "the run never said it was stopping: \(swarm.stderr)")
        #expect(status == 130, "\(swarm.stderr)")
        // The final push waits up to 15 s for this collector; the summary comes after it and was never written.
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("summary.json").path))
    }

    /// `skirmish practice` stops on SIGTERM: the opponents, then the listener; exit status 0 as before.
    @Test(.timeLimit(.minutes(2))) func practiceStopsOnSigterm() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("lifecycle-practice")
        defer { try? FileManager.default.removeItem(at: directory) }
        let practice = try SkirmishProcess(["practice", "--http", "127.0.0.1:0"], logs: directory)
        let ready = try await SkirmishProcess.waitUntil(limit: .seconds(60)) {
            practice.stdout.contains("practice http://127.0.0.1:")
        }
        try #require(ready, "\(practice.stderr)")
        practice.signal(SIGTERM)
        let status = try await practice.wait(limit: .seconds(60))
        #expect(status == 0, "\(practice.stderr)")
        #expect(practice.stderr.contains("SIGTERM: stopping the opponents"))
    }
}

/// Sends SIGINT to `pid` from a plain thread as soon as its stderr says the first one is being handled (at most 30 s).
private final class SecondSignal: Sendable {
    private let done = Atomic<Bool>(false)

    init(pid: pid_t, stderr: URL) {
        Thread.detachNewThread { [self] in
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                let text = (try? String(contentsOf: stderr, encoding: .utf8)) ?? ""
                if text.contains("SIGINT: stopping the run") {
                    kill(pid, SIGINT)
                    self.done.store(true, ordering: .releasing)
                    return
                }
                usleep(5_000)
            }
        }
    }

    /// Whether the second signal was sent.
    var sent: Bool { done.load(ordering: .acquiring) }
}
