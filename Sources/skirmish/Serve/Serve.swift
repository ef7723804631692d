import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry

/// `skirmish serve`: the reference match server, until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the reference match server (Puck, Snap and Suns) until interrupted.",
        discussion: """
            The server speaks the Skirmish wire protocol over UDP, TCP (length-prefixed packets) and WebSocket \
            (GET /ws on the HTTP listener), and serves its own metrics as Prometheus text at GET /metrics. The \
            practice page is at GET /play: two people who open it play Puck against each other (for an AI \
            opponent, run skirmish practice).

            Every listener binds to loopback unless you name another address. Port 0 picks a free port; once \
            listening the server prints one line per listener so scripts can find it:

              listening udp://127.0.0.1:40123
              listening tcp://127.0.0.1:40124
              listening http://127.0.0.1:40125
              listening ws://127.0.0.1:40125/ws

            Examples:
              skirmish serve                                  free ports on 127.0.0.1
              skirmish serve --udp 127.0.0.1:4000 --http 127.0.0.1:8080
              skirmish swarm bots/puck-ladder.yaml --target udp://127.0.0.1:4000

            Its metrics (skirmish_server_*, labelled run="serve-…" and shard="0") can also be pushed to a \
            collector, a final push following the shutdown:
              skirmish serve --push http://127.0.0.1:8428/api/v1/import/prometheus

            On SIGINT or SIGTERM every connected player is sent ServerQuit before the server closes.
            """
    )

    @Option(help: ArgumentHelp("UDP listener address.", valueName: "host:port"))
    var udp = HostPort(host: "127.0.0.1", port: 0)

    @Option(help: ArgumentHelp("TCP listener address (u32 length-prefixed packets).", valueName: "host:port"))
    var tcp = HostPort(host: "127.0.0.1", port: 0)

    @Option(
        help: ArgumentHelp(
            "HTTP listener for /metrics, the practice page /play and the WebSocket endpoint /ws.",
            valueName: "host:port"))
    var http = HostPort(host: "127.0.0.1", port: 0)

    @Option(
        name: .customLong("allow-origin"),
        help: ArgumentHelp(
            "A web origin besides the page's own that may open /ws (repeatable; * admits every origin). "
                + "Browsers from other origins get 403.",
            valueName: "scheme://host:port"))
    var allowOrigin: [String] = []

    @Option(help: "Most sessions held at once (connected plus awaiting resume).")
    var maxSessions = 20_000

    @Option(help: "Most matches running at once.")
    var maxMatches = 5_000

    @Option(help: "Seconds a forming match waits for its other players.")
    var matchmakingTimeout = 30

    @Option(help: "Seed for Snap shuffles (fixed seeds make deals reproducible).")
    var seed: UInt64 = 0x5EED

    @OptionGroup(title: "Pushing metrics to a collector")
    var push: PushOptions

    func validate() throws {
        guard maxSessions > 0 else { throw ValidationError("--max-sessions must be at least 1; got \(maxSessions).") }
        guard maxMatches > 0 else { throw ValidationError("--max-matches must be at least 1; got \(maxMatches).") }
        guard matchmakingTimeout > 0 else {
            throw ValidationError("--matchmaking-timeout must be at least 1 second; got \(matchmakingTimeout).")
        }
    }

    func run() async throws {
        var configuration = ServerConfiguration()
        configuration.udp = udp.listen
        configuration.tcp = tcp.listen
        configuration.http = http.listen
        configuration.maxSessions = maxSessions
        configuration.allowedOrigins = allowOrigin
        configuration.maxMatches = maxMatches
        configuration.matchmakingTimeout = .seconds(Int64(matchmakingTimeout))
        configuration.seed = seed
        let runID = RunID.make(script: "serve", at: Date())
        configuration.metricLabels = ["run": runID, "shard": Shard.whole.description]
        let server = try await ReferenceServer.start(configuration: configuration)
        for line in server.addresses.listeningLines { Console.line(line) }
        let exporter: Exporter?
        do {
            exporter = try push.makeExporter(source: server.metricsSource, runID: runID, shard: .whole)
        } catch let error as InputError {
            await server.shutdown()
            Console.note(error.text)
            throw ExitCode(2)
        }
        if let exporter {
            exporter.start()
            Console.note("pushing the server's metrics (run \(runID)) every \(push.pushInterval) s")
        }
        let signal = await Signals.firstTermination() ?? "stop"
        Console.note("\(signal): telling every player the server is quitting")
        await server.shutdown()
        if let exporter {
            await offCooperativePool { exporter.stop(finalPush: true) }
            Console.note(exporter.stats.summary)
        }
    }
}
