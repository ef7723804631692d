import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishRun
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

            Its metrics (skirmish_server_*, labelled run="serve-…", or the --run-id given, and shard="0") can \
            also be pushed to a collector, a final push following the shutdown:
              skirmish serve --push http://127.0.0.1:8428/api/v1/import/prometheus --run-id nightly-42

            Limits hold per source host (its address, whatever port or connection it uses) and per prefix (its \
            network: /24 of IPv4 and /64 of IPv6 unless --ipv4-prefix and --ipv6-prefix say otherwise): sessions \
            held, handshakes and packets per second. A limit of 0 turns it off; --no-host-limits turns them all off, \
            for a load test whose bots all run on one machine:
              skirmish serve --no-host-limits --udp 127.0.0.1:4000

            TCP, WebSocket and HTTP connections are capped in all and per host, closed when idle and when a frame \
            or request head stays half-sent. At start the server raises its open-file limit to the hard limit and \
            says what it got; at that limit the listeners pause accepting instead of spinning.

            Every refusal is counted in skirmish_server_rejected_packets_total{reason}.

            On SIGINT or SIGTERM every connected player is sent ServerQuit before the server closes.
            """
    )

    @Option(
        help: ArgumentHelp("UDP listener address (default: 127.0.0.1:0, a free port).", valueName: "host:port"),
        transform: HostPort.parse)
    var udp = HostPort(host: "127.0.0.1", port: 0)

    @Option(
        help: ArgumentHelp(
            "TCP listener address, u32 length-prefixed packets (default: 127.0.0.1:0).", valueName: "host:port"),
        transform: HostPort.parse)
    var tcp = HostPort(host: "127.0.0.1", port: 0)

    @Option(
        help: ArgumentHelp(
            "HTTP listener for /metrics, the practice page /play and the WebSocket endpoint /ws (default: 127.0.0.1:0).",
            valueName: "host:port"), transform: HostPort.parse)
    var http = HostPort(host: "127.0.0.1", port: 0)

    @Option(
        name: .customLong("allow-origin"),
        help: ArgumentHelp(
            "A web origin besides the page's own that may open /ws (repeatable; * admits every origin). "
                + "Browsers from other origins get 403. The page's own origin counts only when the server is reached "
                + "by IP address or localhost (a DNS name could be rebound to it): served under a name, list it here.",
            valueName: "scheme://host:port"))
    var allowOrigin: [String] = []

    @Option(help: "Most sessions held at once (connected plus awaiting resume).")
    var maxSessions = 20_000

    @Option(help: "Most matches running at once.")
    var maxMatches = 5_000

    @Option(help: "Seconds a forming match waits for its other players.")
    var matchmakingTimeout = 30

    @Option(
        parsing: .unconditional, help: "Seed for Snap shuffles: fixed seeds make deals reproducible (default: 24301).",
        transform: Seed.parse)
    var seed: UInt64 = 0x5EED

    @Option(
        name: .customLong("run-id"),
        help: ArgumentHelp(
            "The run label of the server's series (default: serve-<time>-<hex>).",
            discussion: """
                Give the swarm's --run-id when dashboards filter on that run: the server's panels then show this \
                server's figures beside the swarm's. Letters, digits, '.', '_' and '-', at most 128.
                """,
            valueName: "id"))
    var runID: String?

    @OptionGroup(title: "Limits per host and prefix")
    var hostLimits: HostLimitOptions

    @OptionGroup(title: "Connections")
    var connectionLimits: ConnectionLimitOptions

    @OptionGroup(title: "Pushing metrics to a collector")
    var push: PushOptions

    @OptionGroup(title: "Logs") var logs: LogOptions

    func validate() throws {
        guard maxSessions > 0 else { throw ValidationError("--max-sessions must be at least 1; got \(maxSessions).") }
        guard maxMatches > 0 else { throw ValidationError("--max-matches must be at least 1; got \(maxMatches).") }
        guard matchmakingTimeout > 0 else {
            throw ValidationError("--matchmaking-timeout must be at least 1 second; got \(matchmakingTimeout).")
        }
        if let runID, !RunOptions.isValidRunID(runID) {
            throw ValidationError(
                "--run-id '\(runID)': a run id is 1 to 128 letters, digits, '.', '_' or '-' (it becomes a label and a "
                    + "Pushgateway group)")
        }
        try hostLimits.check()
        try connectionLimits.check()
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
        configuration.hostLimits = hostLimits.limits
        configuration.connections = connectionLimits.limits
        if hostLimits.noHostLimits {
            configuration.connections.maxConnectionsPerHost = configuration.connections.maxConnections
            configuration.connections.maxConnectionsPerPrefix = configuration.connections.maxConnections
        }
        Console.note(OpenFileLimit.raiseToHard())
        let runID = self.runID ?? RunID.make(script: "serve", at: Date())
        configuration.metricLabels = ["run": runID, "shard": Shard.whole.description]
        let push = self.push
        let exporterLogger = logs.logger("skirmish.exporter", run: runID)
        let run = ServeRun(
            configuration: configuration, console: .terminal, logger: logs.logger("skirmish.server", run: runID)
        ) { source in
            try push.makeExporter(source: source, runID: runID, shard: .whole, logger: exporterLogger)
        }
        try await InputError.reporting {
            try await run.run(pushNote: { "pushing the server's metrics (run \(runID)) every \(push.pushInterval) s" })
        }
    }
}

/// `serve`'s limits per source host and prefix (``ServerConfiguration/HostLimits``).
struct HostLimitOptions: ParsableArguments {
    @Flag(
        help: """
            Turn off every limit per host and prefix, the cap on connections per host included (for load tests \
            whose bots share one machine).
            """)
    var noHostLimits = false

    @Option(help: "Leading bits of an IPv4 address that make its prefix (0–32).")
    var ipv4Prefix = 24

    @Option(help: "Leading bits of an IPv6 address that make its prefix (0–128).")
    var ipv6Prefix = ServerConfiguration.HostLimits.standard.ipv6Prefix

    @Option(help: "Most sessions one host may hold at once; 0 for no limit.")
    var sessionsPerHost = ServerConfiguration.HostLimits.standard.sessionsPerHost ?? 0

    @Option(help: "Most sessions one prefix may hold at once; 0 for no limit.")
    var sessionsPerPrefix = ServerConfiguration.HostLimits.standard.sessionsPerPrefix ?? 0

    @Option(help: "Handshakes (Hellos with a valid cookie) per second one host may make; 0 for no limit.")
    var handshakesPerHost = ServerConfiguration.HostLimits.standard.handshakesPerHost ?? 0

    @Option(help: "Handshakes per second one prefix may make; 0 for no limit.")
    var handshakesPerPrefix = ServerConfiguration.HostLimits.standard.handshakesPerPrefix ?? 0

    @Option(help: "Packets per second one host may send over all its ports and connections; 0 for no limit.")
    var packetsPerHost = ServerConfiguration.HostLimits.standard.packetsPerHost ?? 0

    @Option(help: "Packets per second one prefix may send; 0 for no limit.")
    var packetsPerPrefix = ServerConfiguration.HostLimits.standard.packetsPerPrefix ?? 0

    @Option(
        help: """
            How many prefixes it takes to fill the server: one prefix may hold 1/N of --max-sessions and of \
            --max-matches; 0 for no share.
            """)
    var prefixShares = Int((1 / (ServerConfiguration.HostLimits.standard.prefixShare ?? 1)).rounded())

    func check() throws {
        guard (0...32).contains(ipv4Prefix) else {
            throw ValidationError("--ipv4-prefix must be 0 to 32 bits; got \(ipv4Prefix).")
        }
        guard (0...128).contains(ipv6Prefix) else {
            throw ValidationError("--ipv6-prefix must be 0 to 128 bits; got \(ipv6Prefix).")
        }
        let negative = [
            ("--sessions-per-host", Double(sessionsPerHost)), ("--sessions-per-prefix", Double(sessionsPerPrefix)),
            ("--handshakes-per-host", handshakesPerHost), ("--handshakes-per-prefix", handshakesPerPrefix),
            ("--packets-per-host", packetsPerHost), ("--packets-per-prefix", packetsPerPrefix),
            ("--prefix-shares", Double(prefixShares)),
        ].first { !($0.1 >= 0) }
        if let (name, value) = negative {
            throw ValidationError("\(name) must be 0 (no limit) or more; got \(value).")
        }
    }

    var limits: ServerConfiguration.HostLimits {
        guard !noHostLimits else { return .none }
        var limits = ServerConfiguration.HostLimits()
        limits.ipv4Prefix = ipv4Prefix
        limits.ipv6Prefix = ipv6Prefix
        limits.sessionsPerHost = sessionsPerHost > 0 ? sessionsPerHost : nil
        limits.sessionsPerPrefix = sessionsPerPrefix > 0 ? sessionsPerPrefix : nil
        limits.handshakesPerHost = handshakesPerHost > 0 ? handshakesPerHost : nil
        limits.handshakesPerPrefix = handshakesPerPrefix > 0 ? handshakesPerPrefix : nil
        limits.packetsPerHost = packetsPerHost > 0 ? packetsPerHost : nil
        limits.packetsPerPrefix = packetsPerPrefix > 0 ? packetsPerPrefix : nil
        limits.prefixShare = prefixShares > 0 ? 1 / Double(prefixShares) : nil
        return limits
    }
}

/// `serve`'s caps and timeouts on TCP, WebSocket and HTTP connections (``ServerConfiguration/ConnectionLimits``).
struct ConnectionLimitOptions: ParsableArguments {
    @Option(help: "Most TCP, WebSocket and HTTP connections open at once; more are closed as accepted.")
    var maxConnections = ServerConfiguration.ConnectionLimits().maxConnections

    @Option(help: "Most connections one host may hold open at once (lifted by --no-host-limits).")
    var maxConnectionsPerHost = ServerConfiguration.ConnectionLimits.standard.maxConnectionsPerHost

    @Option(help: "Most connections one prefix may hold open at once (lifted by --no-host-limits).")
    var maxConnectionsPerPrefix = ServerConfiguration.ConnectionLimits.standard.maxConnectionsPerPrefix

    @Option(help: "Seconds a connection may send nothing before it is closed (half-open connections).")
    var idleTimeout = Int(ServerConfiguration.ConnectionLimits().idleTimeout.seconds)

    @Option(help: "Seconds a started frame or HTTP request head may stay incomplete before the connection closes.")
    var frameTimeout = Int(ServerConfiguration.ConnectionLimits().frameTimeout.seconds)

    func check() throws {
        for (name, value) in [
            ("--max-connections", maxConnections), ("--max-connections-per-host", maxConnectionsPerHost),
            ("--max-connections-per-prefix", maxConnectionsPerPrefix),
            ("--idle-timeout", idleTimeout), ("--frame-timeout", frameTimeout),
        ] where value < 1 {
            throw ValidationError("\(name) must be at least 1; got \(value).")
        }
    }

    var limits: ServerConfiguration.ConnectionLimits {
        var limits = ServerConfiguration.ConnectionLimits()
        limits.maxConnections = maxConnections
        limits.maxConnectionsPerHost = maxConnectionsPerHost
        limits.maxConnectionsPerPrefix = maxConnectionsPerPrefix
        limits.idleTimeout = .seconds(Int64(idleTimeout))
        limits.frameTimeout = .seconds(Int64(frameTimeout))
        return limits
    }
}
