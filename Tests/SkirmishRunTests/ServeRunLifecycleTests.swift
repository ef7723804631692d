import Foundation
import SkirmishRun
import SkirmishServer
import SkirmishTelemetry
import SkirmishTestSupport
import Testing

/// `skirmish serve` as one service group, in-process on loopback.
@Suite(.timeLimit(.minutes(5))) struct ServeRunLifecycleTests {
    /// The HTTP listener on a port someone holds, after the UDP and TCP listeners bound: the run throws the typed
    /// error naming `--http`, and the ports bound before it are free again.
    @Test func aTakenHTTPPortLeavesNoListenerBehind() async throws {
        let held = try Loopback.Held()
        defer { held.close() }
        for attempt in 1...3 {
            let udp = try Loopback.freePort(udp: true)
            let tcp = try Loopback.freePort()
            var configuration = ServerConfiguration()
            configuration.udp = .init(host: "127.0.0.1", port: udp)
            configuration.tcp = .init(host: "127.0.0.1", port: tcp)
            configuration.http = .init(host: "127.0.0.1", port: held.port)
            let recorder = RecordingConsole()
            let run = ServeRun(configuration: configuration, console: recorder.console)
            let error: ListenError
            do {
                try await run.run()
                Issue.record("the run started with its HTTP port taken")
                return
            } catch let listen as ListenError {
                error = listen
            }
            // On a busy machine another process can take a port picked free before the server binds it: that
            // listener fails first, and the test starts again on fresh ports.
            if error.transport != "http", attempt < 3 { continue }
            #expect(error.transport == "http", "\(error)")
            #expect(error.description.contains("--http HOST:PORT") == true)
            #expect(run.server.current == nil)
            #expect(!recorder.lines.contains { $0.hasPrefix("listening") })
            #expect(await Loopback.eventually { Loopback.isFree(udp, udp: true) && Loopback.isFree(tcp) })
            return
        }
    }

    /// A graceful shutdown makes the exporter's final push (before the server closes) and closes every listener.
    @Test func aGracefulShutdownPushesOnceMoreAndClosesTheListeners() async throws {
        let sink = try PushSink.start()
        defer { sink.close() }
        let target = try PushTarget(parsing: sink.url, format: .prom)
        let recorder = RecordingConsole()
        let run = ServeRun(configuration: ServerConfiguration(), console: recorder.console) { source in
            Exporter(targets: [target], source: source, interval: .seconds(60), runID: "serve-test", shard: "0")
        }
        let running = Task { try await run.run(pushNote: { "pushing" }) }
        #expect(await Loopback.eventually { run.server.current != nil && recorder.notes.contains("pushing") })
        let server = try #require(run.server.current)
        #expect(recorder.lines.filter { $0.hasPrefix("listening ") }.count == 4)
        #expect(sink.bodies.isEmpty)
        await run.triggerGracefulShutdown()
        try await running.value

        #expect(sink.bodies.count == 1)
        #expect(sink.bodies.last?.contains("skirmish_server_") == true)
        #expect(recorder.notes.contains { $0.contains("1 push") }, "\(recorder.notes)")
        for (port, udp) in SwarmRunLifecycleTests.ports(of: server) {
            #expect(await Loopback.eventually { Loopback.isFree(port, udp: udp) }, "port \(port) still taken")
        }
    }
}
