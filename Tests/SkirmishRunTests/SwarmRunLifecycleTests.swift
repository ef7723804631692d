import Foundation
import SkirmishRun
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishTestSupport
import Testing

/// `skirmish swarm` and `skirmish soak` as one service group, in-process on loopback: a part that cannot start stops
/// everything already started, and a graceful shutdown still runs the final steps.
@Suite(.timeLimit(.minutes(5))) struct SwarmRunLifecycleTests {
    static let script = """
        name: lifecycle
        profile: [{ramp: {to: 6, over: 1s}}, {hold: {for: 10m}}]
        personas:
          - {name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 10hz}
        thresholds: {desyncs: "== 0"}
        """

    static func settings(out: URL, soak: Bool = false) throws -> SwarmRun.Settings {
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.script, file: "lifecycle.yaml")
        let plan = try LoadPlan(script: script)
        var settings = SwarmRun.Settings(
            script: script, scriptPath: "lifecycle.yaml", plan: plan, runID: "lifecycle-test", outDirectory: out.path)
        settings.command = soak ? "soak" : "run"
        settings.loops = 1
        settings.metricsLinger = .zero
        if soak { settings.soak = .init(policy: HealthPolicy(plan: plan), interval: .seconds(1)) }
        return settings
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Every listener the embedded server opened, as (port, is UDP).
    static func ports(of server: ReferenceServer) -> [(Int, Bool)] {
        [
            server.addresses.udp.flatMap(\.port).map { ($0, true) },
            server.addresses.tcp.flatMap(\.port).map { ($0, false) },
            server.addresses.http.flatMap(\.port).map { ($0, false) },
        ].compactMap { $0 }
    }

    /// `--metrics` on a port someone holds: the embedded server had already started (it starts first); the run
    /// throws the typed error naming the flag, and the server's ports, the loop threads and the group are all gone.
    @Test(arguments: [false, true])
    func aTakenMetricsPortStopsTheServerThatAlreadyStarted(soak: Bool) async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let held = try Loopback.Held()
        defer { held.close() }
        var settings = try Self.settings(out: directory, soak: soak)
        settings.metricsPort = held.port
        let recorder = RecordingConsole()
        let run = SwarmRun(settings, console: recorder.console)

        let error = await #expect(throws: RunError.self) { try await run.run() }
        let message = try #require(error).description
        #expect(message.contains("--metrics 127.0.0.1:\(held.port): cannot listen there"))
        #expect(message.contains("pick a free port or 127.0.0.1:0"))

        // The server had started and is closed again: this process can bind each of its ports itself.
        let server = try #require(run.server.current, "the embedded server should start before the endpoint")
        let ports = Self.ports(of: server)
        #expect(ports.count == 3)
        for (port, udp) in ports {
            #expect(await Loopback.eventually { Loopback.isFree(port, udp: udp) }, "port \(port) still taken")
        }
        // No bot ever started, no loop thread is left, no summary was written.
        #expect(run.swarm.current == nil)
        #expect(run.loopGroups.isShutDown)
        #expect(run.loopGroups.threadIDs.count == 2)
        #expect(Loopback.alive(run.loopGroups.threadIDs).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("summary.json").path))
        #expect(recorder.notes.contains { $0.hasPrefix("embedded server: listening udp://") })
    }

    /// A server port someone holds fails the first part: the run throws the server's `ListenError`, and the
    /// endpoint and swarm that waited for it never start.
    @Test func aTakenServerPortFailsTheRunWithTheListenerNamed() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let held = try Loopback.Held()
        defer { held.close() }
        var settings = try Self.settings(out: directory)
        settings.embeddedServer.tcp = .init(host: "127.0.0.1", port: held.port)
        let run = SwarmRun(settings, console: .silent)

        let error = await #expect(throws: ListenError.self) { try await run.run() }
        #expect(error?.transport == "tcp")
        #expect(run.endpoint.current == nil)
        #expect(run.swarm.current == nil)
        #expect(run.loopGroups.isShutDown)
        #expect(Loopback.alive(run.loopGroups.threadIDs).isEmpty)
    }

    /// A graceful shutdown in the middle of the plan (what SIGTERM triggers) stops the bots, makes the final push to
    /// the collector, writes the results folder and prints the table; then every port and loop is released.
    @Test(arguments: [false, true])
    func aGracefulShutdownRunsTheFinalSteps(soak: Bool) async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sink = try PushSink.start()
        defer { sink.close() }
        var settings = try Self.settings(out: directory, soak: soak)
        let target = try PushTarget(parsing: sink.url, format: .prom)
        // One push a minute: the only push this test sees is the final one.
        settings.makeExporter = { source in
            Exporter(targets: [target], source: source, interval: .seconds(60), runID: "lifecycle-test", shard: "0")
        }
        let recorder = RecordingConsole()
        let run = SwarmRun(settings, console: recorder.console)
        let running = Task { try await run.run() }

        #expect(await Loopback.eventually(within: .seconds(120)) { recorder.updates >= 2 }, "\(recorder.notes)")
        let server = try #require(run.server.current)
        let endpoint = try #require(run.endpoint.current)
        weak let swarm = run.swarm.current
        #expect(swarm != nil)
        #expect(sink.bodies.isEmpty)
        await run.triggerGracefulShutdown()
        let result = try await running.value

        #expect(result.summary.interrupted)
        #expect(result.signalExitStatus == nil)
        #expect(recorder.progressEnded)
        #expect(sink.bodies.count == 1)
        #expect(sink.bodies.last?.contains("skirmish_server_") == true, "the final push carries the server's series")
        #expect(sink.bodies.last?.contains("skirmish_packets_sent_total") == true)
        #expect(result.summary.exporter?.pushes ?? 0 >= 1)
        let summary = try Data(contentsOf: directory.appendingPathComponent("summary.json"))
        let decoded = try JSONDecoder().decode(RunSummary.self, from: summary)
        #expect(decoded.interrupted)
        #expect(decoded.soak?.state == (soak ? .interrupted : nil))
        #expect(recorder.lines.contains { $0.hasPrefix("results: ") })
        for (port, udp) in Self.ports(of: server) + [(endpoint.server.localAddress.port ?? 0, false)] {
            #expect(await Loopback.eventually { Loopback.isFree(port, udp: udp) }, "port \(port) still taken")
        }
        #expect(Loopback.alive(run.loopGroups.threadIDs).isEmpty)
        // Nothing holds the swarm any more: its release stopped its bot loop threads.
        #expect(await Loopback.eventually { swarm == nil })
    }

    /// The plan's natural end ends the run successfully: the group stops the other parts and the summary passes.
    @Test func thePlansEndEndsTheRun() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var settings = try Self.settings(out: directory)
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.script, file: "lifecycle.yaml")
        settings.plan = try LoadPlan(script: script, overrides: .init(duration: .seconds(2)))
        let run = SwarmRun(settings, console: .silent)
        let result = try await run.run()
        #expect(!result.summary.interrupted)
        #expect(result.signalExitStatus == nil)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("report.html").path))
        #expect(Loopback.alive(run.loopGroups.threadIDs).isEmpty)
    }
}
