import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A swarm process with no server in it keeps the threads that carry bots first on their cores: every other thread
/// (the controller, the progress line, the metrics endpoint's loop, the thread pool) runs under SCHED_BATCH, so waking
/// one of them never preempts a bot loop in the middle of its sends.
@Suite struct LoopPrecedenceTests {
    /// Each thread of process `pid`: its name and its scheduling policy (SCHED_OTHER 0, SCHED_BATCH 3).
    static func threads(of pid: Int32) -> [(name: String, policy: Int)] {
        let task = "/proc/\(pid)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: task)) ?? []
        return ids.compactMap { id in
            guard let stat = try? String(contentsOfFile: "\(task)/\(id)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"),
                let name = try? String(contentsOfFile: "\(task)/\(id)/comm", encoding: .utf8)
            else { return nil }
            // After the name: field 3 (the state) onwards; the policy is field 41.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 38, let policy = Int(fields[38]) else { return nil }
            return (name.trimmingCharacters(in: .whitespacesAndNewlines), policy)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func everyThreadButTheBotLoopRunsAsBatchWork() async throws {
        let directory = try SkirmishProcess.temporaryDirectory("loop-precedence")
        let serve = try SkirmishProcess(
            ["serve", "--udp", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0"], logs: directory)
        defer { serve.signal(SIGKILL) }
        let listening = try await SkirmishProcess.waitUntil(limit: .seconds(30)) {
            serve.stdout.contains("listening http://")
        }
        try #require(listening, "\(serve.stderr)")
        let port = try ServeLimitTests.port("listening udp://", in: serve.stdout)
        let script = directory.appendingPathComponent("precedence.yaml")
        try """
        name: precedence
        profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 60s}}]
        personas: [{name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 30hz,
                    steps: [{play: until_match_over}, {repeat: true}]}]
        """.write(to: script, atomically: true, encoding: .utf8)
        let swarmDirectory = directory.appendingPathComponent("swarm")
        try FileManager.default.createDirectory(at: swarmDirectory, withIntermediateDirectories: true)
        let swarm = try SkirmishProcess(
            [
                "swarm", script.path, "--target", "udp://127.0.0.1:\(port)", "--loops", "1", "--out",
                directory.appendingPathComponent("out").path, "--plain-progress",
            ], logs: swarmDirectory)
        let pid = swarm.process.processIdentifier
        var seen: [(name: String, policy: Int)] = []
        // NIO's loops: the bots' group (TCP and WebSocket sessions) carries bots; the other serves the endpoint.
        func isNIO(_ thread: (name: String, policy: Int)) -> Bool { thread.name.hasPrefix("NIO-ELT") }
        let settled = try await SkirmishProcess.waitUntil(limit: .seconds(45)) {
            seen = Self.threads(of: pid)
            let loops = seen.filter { $0.name.hasPrefix("skirmish-bots") }
            let others = seen.filter { !$0.name.hasPrefix("skirmish-bots") && !isNIO($0) }
            return loops.count == 1 && others.count >= 2 && others.allSatisfy { $0.policy == 3 }
                && seen.filter(isNIO).contains { $0.policy == 3 }
        }
        #expect(settled, "\(seen)")
        // The loops that carry bots keep the default policy, and so their wakeups keep preempting batch work.
        #expect(seen.filter { $0.name.hasPrefix("skirmish-bots") }.map(\.policy) == [0], "\(seen)")
        #expect(seen.filter(isNIO).contains { $0.policy == 0 }, "\(seen)")
        swarm.signal(SIGTERM)
        #expect([0, 143].contains(try await swarm.wait(limit: .seconds(60))), "\(swarm.stderr)")
        // The server, another process, is left as it was.
        #expect(Self.threads(of: serve.process.processIdentifier).allSatisfy { $0.policy == 0 })
        serve.signal(SIGTERM)
        _ = try await serve.wait(limit: .seconds(30))
    }
}
