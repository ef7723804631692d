import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishTelemetry

/// Everything a reference server can be told: where to listen and how much it will hold.
///
/// The defaults fit one core of the budget in DESIGN §9 (≥ 4,000 Puck matches at 60 Hz) with head room, and every
/// table the server keeps is bounded by one of these limits.
public struct ServerConfiguration: Sendable {
    /// A host and port to listen on; port 0 picks a free port.
    public struct Listen: Sendable, Hashable, CustomStringConvertible {
        /// The address to bind: `127.0.0.1` (the default) for loopback only, `0.0.0.0` or `::` for every interface.
        public var host: String
        /// The port to bind; 0 (the default) picks a free one, which ``ReferenceServer/addresses`` reports.
        public var port: Int

        /// A listener on `host`:`port`, by default a free port on loopback.
        public init(host: String = "127.0.0.1", port: Int = 0) {
            self.host = host
            self.port = port
        }

        /// `host:port`, as given.
        public var description: String { "\(host):\(port)" }
    }

    /// UDP listener; `nil` turns it off.
    public var udp: Listen? = Listen()
    /// TCP listener (length-prefixed packets); `nil` turns it off.
    public var tcp: Listen? = Listen()
    /// HTTP listener for `/metrics`, the WebSocket endpoint `/ws` and the practice page; `nil` turns it off.
    public var http: Listen? = Listen()
    /// Web origins besides the page's own that may open `/ws` (`https://example.com`, or `*` for any); a browser
    /// request from any other origin is refused with 403 (``OriginPolicy``).
    public var allowedOrigins: [String] = []
    /// Sessions held at once (connected plus detached awaiting resume).
    public var maxSessions = 20_000
    /// Matches running at once.
    public var maxMatches = 5_000
    /// Matches still waiting for players.
    public var maxForming = 5_000
    /// How long a forming match waits for its other players before they are sent away.
    public var matchmakingTimeout: TimeAmount = .seconds(30)
    /// How long a dropped player's seat is kept for a resume.
    public var resumeWindow: TimeAmount = .seconds(15)
    /// Packets per second one sender (a UDP address and port, or one TCP or WebSocket connection) may send, over any
    /// second. The counts are kept in a fixed-size sketch, never a table a flood of new senders could fill.
    public var packetRate: Double = 400
    /// Limits per source host and per prefix, which hold however many ports or connections a machine opens.
    public var hostLimits = HostLimits.none
    /// Limits on TCP and WebSocket connections and their idleness.
    public var connections = ConnectionLimits()
    /// Messages kept for a detached player (reliable messages sent while it is away).
    public var detachedBacklog = 256
    /// Reliability settings for every peer.
    public var reliability = ReliableEndpoint.Configuration()
    /// Turns after which a Snap table ends with the most cards winning (clients' replicas must use the same value).
    public var snapTurnLimit = SnapGame.turnLimit
    /// The games this server plays, by wire number: the built-in three unless a program registers its own
    /// (``SkirmishGames/GameRegistry/register(_:make:)``). A `Hello` for any other game is refused and counted as
    /// `unknown_game`.
    public var games = GameRegistry.builtIn
    /// Seed for match shuffles; fixed seeds make Snap deals reproducible.
    public var seed: UInt64 = 0x5EED
    /// Labels put first on every exported server series: `run` and `shard`, so a collector and the dashboards'
    /// `run` variable find a server beside the swarm that loads it.
    public var metricLabels: Labels = ["run": "serve", "shard": "0/1"]
    /// Test and evaluation hook: when set, every Puck match serves seeded shots at one seat instead of open play
    /// (`ShotMachine`, in SkirmishGames). Package access only; `nil` (the default) is the real game.
    package var shotMachine: ShotMachine.Configuration?

    /// The defaults: UDP, TCP and HTTP on free loopback ports and no limits per host: an in-process server.
    public init() {}
}

extension ServerConfiguration {
    /// Limits per source host (its address without the port) and per prefix (its network); `nil` turns one off.
    ///
    /// ``none`` is the default of an in-process server, whose only clients are the tool's own bots sharing
    /// 127.0.0.1; ``standard`` is what `skirmish serve` applies unless told otherwise. Every refusal is counted under
    /// its own reason (`host_rate_limited`, `prefix_rate_limited`, `handshake_rate_limited`, `host_sessions_full`,
    /// `prefix_sessions_full`).
    public struct HostLimits: Sendable, Hashable {
        /// Leading bits of an IPv4 address that make its prefix.
        public var ipv4Prefix = 24
        /// Leading bits of an IPv6 address that make its prefix: 56, what a provider usually hands one customer
        /// (RIPE-690 recommends a /56 or a /48), so a home's 256 /64 networks count as one.
        public var ipv6Prefix = 56
        /// Sessions one host may hold at once (attached or awaiting resume).
        public var sessionsPerHost: Int?
        /// Sessions one prefix may hold at once.
        public var sessionsPerPrefix: Int?
        /// Handshakes (a verified Hello: a new session or a resume) one host may make per second.
        public var handshakesPerHost: Double?
        /// Handshakes one prefix may make per second.
        public var handshakesPerPrefix: Double?
        /// Packets per second one host may send, over all its ports and connections.
        public var packetsPerHost: Double?
        /// Packets per second one prefix may send.
        public var packetsPerPrefix: Double?
        /// The largest fraction of the server's sessions (``ServerConfiguration/maxSessions``) and of its matches
        /// (``ServerConfiguration/maxMatches``) one prefix may hold, so that at least 1 ÷ share networks are needed to
        /// fill the server however many hosts each has. A prefix counts the matches its players opened (a player
        /// who joins a forming match opens none); one at its share is refused a seat that would open another
        /// (`prefix_matches_full`), and a session beyond its share of sessions is `prefix_sessions_full`. A share
        /// never leaves a prefix less than one host's room: ``sessionsPerHost`` sessions and a match for each two.
        public var prefixShare: Double?

        /// No limit per host or prefix; set the fields you want.
        public init() {}

        /// No limit per host or prefix.
        public static let none = HostLimits()

        /// Room for a household or a small office behind one address (64 players at 30 Hz inputs plus acks), a
        /// few times that per prefix, and far less than a whole server for either: one prefix holds at most 1/128 of
        /// the sessions and of the matches (156 and 39 of the default 20,000 and 5,000), so filling the server takes
        /// 128 networks.
        public static let standard: HostLimits = {
            var limits = HostLimits()
            limits.sessionsPerHost = 64
            limits.sessionsPerPrefix = 256
            limits.handshakesPerHost = 20
            limits.handshakesPerPrefix = 80
            limits.packetsPerHost = 4_000
            limits.packetsPerPrefix = 16_000
            limits.prefixShare = 1.0 / 128
            return limits
        }()
    }

    /// Limits on stream (TCP and WebSocket) and HTTP connections.
    public struct ConnectionLimits: Sendable, Hashable {
        /// Connections open at once over the TCP and HTTP listeners together; more are closed as accepted.
        public var maxConnections = 16_384
        /// Connections one host may hold open at once. As many as ``maxConnections`` by default, for an in-process
        /// server whose clients are the tool's own bots on 127.0.0.1; ``standard`` (what `skirmish serve` applies)
        /// holds one host to 1,024.
        public var maxConnectionsPerHost = 16_384
        /// Connections one prefix (``HostLimits/ipv4Prefix``, ``HostLimits/ipv6Prefix``) may hold open at once: as many
        /// as ``maxConnections`` by default; ``standard`` holds one prefix to 2,048, so filling the server takes eight
        /// networks, not 17 hosts of one.
        public var maxConnectionsPerPrefix = 16_384
        /// A connection that sends nothing for this long is closed (a half-open or abandoned one).
        public var idleTimeout: TimeAmount = .seconds(30)
        /// A started frame (or an HTTP request head) must be complete within this long, or the connection closes:
        /// a sender that stops half-way holds no buffer past it.
        public var frameTimeout: TimeAmount = .seconds(10)
        /// The open-file limit to fit the caps under instead of the process's own (tests); `nil` reads the process's.
        package var descriptorLimit: Int?

        /// The in-process defaults: 16,384 connections, as many per host and per prefix, a 30 s idle timeout and a
        /// 10 s frame timeout.
        public init() {}

        /// The caps `skirmish serve` applies: no host holds more than 1,024 connections, no prefix more than 2,048.
        public static let standard: ConnectionLimits = {
            var limits = ConnectionLimits()
            limits.maxConnectionsPerHost = 1_024
            limits.maxConnectionsPerPrefix = 2_048
            return limits
        }()

        /// Descriptors kept out of the caps under an open-file limit of `descriptors`: the listeners, the event
        /// loops' own descriptors, log files, the metrics exporter, and the one a refused connection takes between
        /// its `accept` and its close — 64, plus 1/16 of the limit, but never more than half of a small limit (a
        /// server holds about 20 of its own: under a limit of 64 it still takes 32 connections, not one).
        package static func reserved(under descriptors: Int) -> Int { min(64 + descriptors / 16, descriptors / 2) }

        /// These caps fitted under an open-file limit of `descriptors`: at most the limit less ``reserved(under:)``
        /// connections, and the caps per host and per prefix scaled down in the same proportion, so that a host
        /// still holds the same share of the server. Beyond the limit `accept` fails and every new connection
        /// (a player, a WebSocket, a `/metrics` scrape) waits in the backlog; under the fitted caps it is refused or
        /// admitted at once.
        package func fitted(toDescriptors descriptors: Int) -> ConnectionLimits {
            let room = max(1, descriptors - Self.reserved(under: descriptors))
            guard room < maxConnections else { return self }
            var fitted = self
            fitted.maxConnections = room
            fitted.maxConnectionsPerHost = Self.scaled(maxConnectionsPerHost, from: maxConnections, to: room)
            fitted.maxConnectionsPerPrefix = Self.scaled(maxConnectionsPerPrefix, from: maxConnections, to: room)
            return fitted
        }

        private static func scaled(_ cap: Int, from total: Int, to room: Int) -> Int {
            max(1, min(room, Int((Double(cap) * Double(room) / Double(total)).rounded(.down))))
        }
    }
}
