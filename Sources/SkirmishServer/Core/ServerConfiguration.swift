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
        public var host: String
        public var port: Int

        public init(host: String = "127.0.0.1", port: Int = 0) {
            self.host = host
            self.port = port
        }

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
    /// Packets per second one address may send, sustained.
    public var packetRate: Double = 400
    /// Burst allowance of the per-address rate limit.
    public var packetBurst: Double = 200
    /// Addresses tracked by the rate limiter at once (the oldest idle ones are forgotten first).
    public var rateLimiterCapacity = 65_536
    /// Messages kept for a detached player (reliable messages sent while it is away).
    public var detachedBacklog = 256
    /// Reliability settings for every peer.
    public var reliability = ReliableEndpoint.Configuration()
    /// Turns after which a Snap table ends with the most cards winning (clients' replicas must use the same value).
    public var snapTurnLimit = SnapGame.turnLimit
    /// Seed for match shuffles; fixed seeds make Snap deals reproducible.
    public var seed: UInt64 = 0x5EED
    /// Labels put first on every exported server series: `run` and `shard`, so a collector and the dashboards'
    /// `run` variable find a server beside the swarm that loads it.
    public var metricLabels: Labels = ["run": "serve", "shard": "0/1"]
    /// Test and evaluation hook: when set, every Puck match serves seeded shots at one seat instead of open play
    /// (``ShotMachine``). Package access only; `nil` (the default) is the real game.
    package var shotMachine: ShotMachine.Configuration?

    public init() {}
}
