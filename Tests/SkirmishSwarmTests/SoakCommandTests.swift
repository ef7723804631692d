import Foundation
import SkirmishTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `skirmish soak` as a nightly job runs it: the built executable in its own process, so the resident memory and
/// descriptors it judges are its own.
@Suite(.serialized) struct SoakCommandTests {
    /// A mixed script with a short ramp: Puck, Snap and Suns players and reconnectors that drop and resume sockets.
    static let script = """
        name: soak-ci
        profile: [{ramp: {to: 48, over: 10s}}, {hold: {for: 1h}}]
        personas:
          - {name: chaser, weight: 4, game: puck, behavior: chaser, input_rate: 20hz}
          - {name: snap, weight: 3, game: snap, seats: 3, snap_reaction: {mean: 300ms, stddev: 80ms}}
          - {name: suns, weight: 2, game: suns}
          - {name: reconnector, weight: 2, game: puck, behavior: reconnector, reconnect_every: 4s..8s, offline_for: 500ms..1s}
        thresholds: {desyncs: "== 0"}
        """

    static func writeScript(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("soak-ci.yaml").path
        try Self.script.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Lenient where a debug build on a shared two-core machine is slow, strict on what this suite is about.
    static let lenient = ["--lateness-budget", "1s", "--error-budget", "50%", "--plain-progress", "--loops", "2"]

    static func verdict(_ check: String, in summary: [String: Any]) -> [String: Any]? {
        let soak = summary["soak"] as? [String: Any]
        return (soak?["verdicts"] as? [[String: Any]])?.first { $0["check"] as? String == check }
    }

    /// Sum of the pushed `skirmish_packets_sent_total` series in a Prometheus text body.
    static func packetsSent(inPush body: String) -> UInt64 {
        body.split(separator: "\n").filter { $0.hasPrefix("skirmish_packets_sent_total{") }
            .compactMap { $0.split(separator: " ").last.flatMap { UInt64($0) } }.reduce(0, +)
    }

    @Test(.timeLimit(.minutes(4)))
    func aTwoMinuteSoakKeepsMemoryAndDescriptorsFlatAfterWarmUp() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("soak-flat")
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out")
        let soak = try SkirmishProcess(
            [
                "soak", try Self.writeScript(in: directory), "--duration", "2m", "--check-interval", "5s",
                "--warm-up", "40s", "--out", out.path,
            ] + Self.lenient, logs: directory)
        let status = try await soak.wait(limit: .seconds(180))
        #expect([0, 99].contains(status), "\(soak.stderr)")
        let summary = try SkirmishProcess.summary(in: out)
        let report = try #require(summary["soak"] as? [String: Any])
        #expect(report["state"] as? String == "finished")
        #expect((report["checks"] as? Int ?? 0) >= 20)
        for check in ["memory", "open_files"] {
            let verdict = Self.verdict(check, in: summary)
            #expect(verdict?["status"] as? String == "pass", "\(check): \(verdict ?? [:])")
        }
        let desyncs = Self.verdict("desyncs", in: summary)
        #expect(desyncs?["status"] as? String == "pass", "desyncs: \(desyncs ?? [:])")
        let resources = try #require(report["resources"] as? [String: Any])
        let start = try #require(resources["residentBytesAfterWarmUp"] as? Int)
        let end = try #require(resources["residentBytesEnd"] as? Int)
        let files = try #require(resources["openFilesEnd"] as? Int)
        #expect(end - start < 32 << 20)
        #expect(files > 10)
        #expect(soak.stdout.contains("PASS  memory"))
        #expect((summary["matchesCompleted"] as? Int ?? 0) > 0)
        #expect((summary["reconnects"] as? Int ?? 0) > 0)
    }

    @Test(.timeLimit(.minutes(3)))
    func sigtermStopsCleanlyWithAFinalPushAndTheReport() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("soak-term")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sink = try PushSink.start()
        defer { sink.close() }
        let out = directory.appendingPathComponent("out")
        let soak = try SkirmishProcess(
            [
                "soak", try Self.writeScript(in: directory), "--duration", "10m", "--check-interval", "2s",
                "--push", sink.url, "--format", "prom", "--push-interval", "1", "--out", out.path,
            ] + Self.lenient,
            logs: directory)
        // Signal once the run is under way: two checkpoints written and pushes arriving.
        let underWay = try await SkirmishProcess.waitUntil(limit: .seconds(90)) {
            let report = try SkirmishProcess.summary(in: out)["soak"] as? [String: Any]
            return (report?["checks"] as? Int ?? 0) >= 3 && !sink.bodies.isEmpty
        }
        #expect(underWay, "\(soak.stderr)")
        soak.signal(SIGTERM)
        let status = try await soak.wait(limit: .seconds(60))
        #expect(status == 143, "\(soak.stderr)")
        #expect(soak.stderr.contains("SIGTERM"))
        let summary = try SkirmishProcess.summary(in: out)
        #expect(summary["interrupted"] as? Bool == true)
        #expect((summary["soak"] as? [String: Any])?["state"] as? String == "interrupted")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("report.html").path))
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("metrics.om").path))
        // The final push carries every packet the summary counts (counters are cumulative; late goodbyes only add).
        let sent = try #require(((summary["packets"] as? [String: Any])?["sent"] as? NSNumber)?.uint64Value)
        let pushed = Self.packetsSent(inPush: try #require(sink.bodies.last))
        #expect(sent > 0)
        #expect(pushed >= sent)
        #expect(soak.stdout.contains("health after"))
    }

    @Test(.timeLimit(.minutes(3)))
    func aCollectorOutageIsReportedAndNothingIsLostOrBlocked() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("soak-outage")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sink = try PushSink.start()
        defer { sink.close() }
        let hung = try PushSink.blackHole()
        defer { hung.close() }
        sink.setDown(true)
        let out = directory.appendingPathComponent("out")
        let started = ContinuousClock.now
        let soak = try SkirmishProcess(
            [
                "soak", try Self.writeScript(in: directory), "--duration", "30s", "--check-interval", "2s",
                "--push", sink.url, "--format", "prom", "--push", hung.url, "--format", "json", "--push-interval", "1",
                "--out", out.path,
            ] + Self.lenient, logs: directory)
        // The collector answers 503 until four checks have seen the failures, then comes back.
        let seen = try await SkirmishProcess.waitUntil(limit: .seconds(60)) {
            let report = try SkirmishProcess.summary(in: out)["soak"] as? [String: Any]
            return (report?["checks"] as? Int ?? 0) >= 5 && sink.refused >= 3
        }
        #expect(seen, "\(soak.stderr)")
        sink.setDown(false)
        let status = try await soak.wait(limit: .seconds(120))
        #expect([0, 99].contains(status), "\(soak.stderr)")
        let summary = try SkirmishProcess.summary(in: out)
        let report = try #require(summary["soak"] as? [String: Any])
        let outages = try #require(report["outages"] as? [[String: Any]])
        #expect(!outages.isEmpty)
        #expect((outages.first?["failures"] as? Int ?? 0) >= 3)
        #expect(outages.first?["ongoing"] as? Bool == false)
        #expect(Self.verdict("collector", in: summary)?["status"] as? String == "warn")
        #expect(soak.stdout.contains("WARN  collector"))
        // Nothing lost: the last push that landed carries the run's totals.
        let sent = try #require(((summary["packets"] as? [String: Any])?["sent"] as? NSNumber)?.uint64Value)
        #expect(Self.packetsSent(inPush: try #require(sink.bodies.last)) >= sent)
        // Nothing blocked: the bots ran their 30 s on schedule while one collector hung; only the bounded final
        // push (10 s plus a request timeout) waits on it.
        let duration = try #require(summary["durationSeconds"] as? Double)
        #expect(duration < 33)
        #expect(ContinuousClock.now - started < .seconds(80))
        let exporter = try #require(summary["exporter"] as? [String: Any])
        #expect((exporter["failures"] as? Int ?? 0) > 0)
    }

    @Test func badSoakOptionsAreBadInput() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("soak-bad")
        defer { try? FileManager.default.removeItem(at: directory) }
        let soak = try SkirmishProcess(
            ["soak", try Self.writeScript(in: directory), "--check-interval", "soon", "--out", directory.path],
            logs: directory)
        #expect(try await soak.wait(limit: .seconds(30)) == 2)
        #expect(soak.stderr.contains("--check-interval soon"))
    }
}
