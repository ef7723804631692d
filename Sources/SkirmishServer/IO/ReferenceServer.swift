import Logging
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire

/// The reference match server, running on one event loop of the group it is given.
///
/// One loop owns every session and match, so no state is shared between threads and nothing on the hot path takes a
/// lock; DESIGN §9 budgets one core for 4,000 Puck matches. Start it with ``start(configuration:group:)``, read
/// ``addresses`` to find the listeners, and ``shutdown()`` to send every player `ServerQuit` and close.
public final class ReferenceServer: Sendable {
    /// Where the server listens.
    public struct Addresses: Sendable {
        /// The bound UDP address, with the real port when 0 was asked for; `nil` when UDP is off.
        public var udp: SocketAddress?
        /// The bound TCP address; `nil` when TCP is off.
        public var tcp: SocketAddress?
        /// The bound HTTP address (`/metrics`, `/ws`, the practice page); `nil` when HTTP is off.
        public var http: SocketAddress?

        /// One line per listener, such as `listening udp://127.0.0.1:40123`, for scripts to find the ports.
        public var listeningLines: [String] {
            var lines: [String] = []
            if let udp { lines.append("listening udp://\(Self.hostPort(udp))") }
            if let tcp { lines.append("listening tcp://\(Self.hostPort(tcp))") }
            if let http {
                lines.append("listening http://\(Self.hostPort(http))")
                lines.append("listening ws://\(Self.hostPort(http))/ws")
            }
            return lines
        }

        static func hostPort(_ address: SocketAddress) -> String {
            let host = address.ipAddress ?? "127.0.0.1"
            let shown = host.contains(":") ? "[\(host)]" : host
            return "\(shown):\(address.port ?? 0)"
        }
    }

    /// The addresses the listeners are bound to, known once ``start(configuration:group:)`` returns.
    public let addresses: Addresses
    let loop: any EventLoop
    let state: NIOLoopBound<ServerLoop>
    private let listeners: [any Channel]
    private let http: HTTPServer?

    private init(
        addresses: Addresses, loop: any EventLoop, state: NIOLoopBound<ServerLoop>,
        listeners: [any Channel],
        http: HTTPServer?
    ) {
        self.addresses = addresses
        self.loop = loop
        self.state = state
        self.listeners = listeners
        self.http = http
    }

    /// Binds the listeners the configuration names and starts the 60 Hz clock.
    ///
    /// The HTTP listener serves `/metrics`, the practice page at `/play` and the WebSocket endpoint `/ws`; `routes`
    /// adds GET routes on the same port (the practice command's `/play/match`) and replaces a built-in one of the same
    /// path.
    ///
    /// `logger` receives the server's start and stop with its settings, its refusals of input (one line per reason
    /// per `rejectionLogInterval` at most, with how many it stands for) and, at debug, streams opening and closing;
    /// nothing per packet.
    ///
    /// - Throws: the bind error of the first listener that could not bind, after closing the others.
    public static func start(
        configuration: ServerConfiguration,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        routes: [String: HTTPServer.Route] = [:],
        logger: Logger = Logger(label: "skirmish.server"),
        rejectionLogInterval: TimeAmount = .seconds(10)
    ) async throws -> ReferenceServer {
        let loop = group.next()
        // Every connection takes a descriptor: caps above the open-file limit would let `accept` fail first, and new
        // players and scrapes would wait in the backlog instead of being admitted or refused at once.
        var configuration = configuration
        let descriptors = configuration.connections.descriptorLimit ?? DescriptorLimit.current()
        if let descriptors {
            configuration.connections = configuration.connections.fitted(toDescriptors: descriptors)
        }
        let state = try await loop.submit {
            NIOLoopBound(
                ServerLoop(
                    loop: loop, core: ServerCore(configuration: configuration), logger: logger,
                    rejectionLogInterval: rejectionLogInterval),
                eventLoop: loop)
        }.get()
        var listeners: [any Channel] = []
        var addresses = Addresses()
        var http: HTTPServer?
        do {
            if let udp = configuration.udp {
                // No SO_REUSEADDR: on UDP it would let a second server bind the same port and silently take over
                // (or split) its traffic, where the operator needs "address already in use". The server opens the
                // socket itself so that it knows the descriptor to batch reads and writes on (DatagramListener).
                let channel = try await ListenError.naming("udp", host: udp.host, port: udp.port) {
                    let descriptor = try DatagramListener.openSocket(host: udp.host, port: udp.port)
                    let channel = try await DatagramBootstrap(group: loop)
                        // A few MiB of kernel buffer ride out a busy tick instead of dropping a burst of datagrams.
                        .channelOption(.socketOption(.so_rcvbuf), value: 4 << 20)
                        .channelOption(.socketOption(.so_sndbuf), value: 4 << 20)
                        // NIO reads the first datagram of each readable spell; the listener batches the rest.
                        .channelOption(.maxMessagesPerRead, value: 1)
                        .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 2048))
                        .channelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(DatagramHandler(server: state))
                            }
                        }
                        .withBoundSocket(descriptor).get()
                    try await loop.submit {
                        state.value.datagrams = DatagramListener(descriptor: descriptor, channel: channel)
                    }.get()
                    return channel
                }
                listeners.append(channel)
                addresses.udp = channel.localAddress
            }
            if let tcp = configuration.tcp {
                let channel = try await ListenError.naming("tcp", host: tcp.host, port: tcp.port) {
                    try await ServerBootstrap(group: loop)
                        .serverChannelOption(.backlog, value: 1024)
                        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                        .serverChannelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    AcceptBackoff { _ in state.value.acceptBackedOff() })
                            }
                        }
                        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                        .childChannelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try state.value.admit(channel)
                                try channel.pipeline.syncOperations.addHandlers(PacketFrameCodec.serverHandlers())
                                try channel.pipeline.syncOperations.addHandler(StreamHandler(server: state))
                            }
                        }
                        .bind(host: tcp.host, port: tcp.port).get()
                }
                listeners.append(channel)
                addresses.tcp = channel.localAddress
            }
            if let listen = configuration.http {
                let server = try await ListenError.naming("http", host: listen.host, port: listen.port) {
                    try await HTTPServer.bind(
                        host: listen.host, port: listen.port, group: loop,
                        routes: [
                            "/metrics": Self.metricsRoute(state: state, loop: loop),
                            PracticePage.path: PracticePage.route,
                        ].merging(routes) { _, extra in extra },
                        webSocketPath: "/ws", origins: OriginPolicy(allowed: configuration.allowedOrigins),
                        onWebSocket: { channel in
                            channel.eventLoop.execute {
                                _ = try? channel.pipeline.syncOperations.addHandler(StreamHandler(server: state))
                            }
                        },
                        admit: { channel in try state.value.admit(channel, http: true) },
                        onAcceptBackoff: { _ in state.value.acceptBackedOff() })
                }
                http = server
                addresses.http = server.localAddress
            }
        } catch {
            logger.error("server failed to start", metadata: ["error": "\(error)"])
            for channel in listeners { try? await channel.close() }
            try? await http?.close()
            throw error
        }
        try await loop.submit { state.value.startTicking() }.get()
        var settings = Self.settings(configuration, addresses: addresses)
        settings["open.files"] = "\(descriptors.map { "\($0)" } ?? "unlimited")"
        logger.info("server started", metadata: settings)
        return ReferenceServer(
            addresses: addresses, loop: loop, state: state, listeners: listeners, http: http)
    }

    /// Sends every connected player `ServerQuit`, then closes every connection and listener.
    public func shutdown() async {
        let streams = try? await loop.submit { [state] in state.value.stop() }.get()
        for channel in streams ?? [] { try? await channel.close() }
        for channel in listeners { try? await channel.close() }
        try? await http?.close()
        try? await loop.submit { [state] in state.value.logger.info("server stopped") }.get()
    }

    /// What the start line says: where the server listens and the limits it holds.
    private static func settings(_ configuration: ServerConfiguration, addresses: Addresses) -> Logger.Metadata {
        var settings: Logger.Metadata = [
            "max.sessions": "\(configuration.maxSessions)", "max.matches": "\(configuration.maxMatches)",
            "max.connections": "\(configuration.connections.maxConnections)",
            "max.connections.per.host": "\(configuration.connections.maxConnectionsPerHost)",
            "max.connections.per.prefix": "\(configuration.connections.maxConnectionsPerPrefix)",
            "host.limits": "\(configuration.hostLimits == ServerConfiguration.HostLimits.none ? "off" : "on")",
            "matchmaking.timeout.seconds": "\(Int(configuration.matchmakingTimeout.seconds))",
        ]
        if let udp = addresses.udp { settings["listen.udp"] = "\(Addresses.hostPort(udp))" }
        if let tcp = addresses.tcp { settings["listen.tcp"] = "\(Addresses.hostPort(tcp))" }
        if let http = addresses.http { settings["listen.http"] = "\(Addresses.hostPort(http))" }
        return settings
    }

    /// A copy of the server's counters.
    package func stats() async throws -> ServerStats {
        try await loop.submit { [state] in state.value.core.stats }.get()
    }

    /// The server's metrics as Prometheus text, as served at `GET /metrics`.
    public func metricsText() async throws -> String {
        ServerMetrics.prometheusText(try await metricsSnapshot())
    }

    /// The server's metrics as a snapshot, for the exporter and the swarm's results folder.
    public func metricsSnapshot() async throws -> MetricsSnapshot {
        try await loop.submit { [state] in Self.snapshot(state.value) }.get()
    }

    /// The server's metrics for an ``Exporter`` (which collects on its own thread and may wait for the loop).
    public var metricsSource: any MetricsSource {
        ClosureMetricsSource { [loop, state] in
            (try? loop.submit { Self.snapshot(state.value) }.wait()) ?? MetricsSnapshot()
        }
    }

    private static func snapshot(_ server: ServerLoop) -> MetricsSnapshot {
        ServerMetrics.snapshot(
            server.core.stats, games: server.core.configuration.games, tickDurations: server.tickDurations,
            labels: server.core.configuration.metricLabels,
            at: WallTime.milliseconds(), traffic: server.core.traffic)
    }

    private static func metricsRoute(state: NIOLoopBound<ServerLoop>, loop: any EventLoop)
        -> HTTPServer.Route
    {
        HTTPServer.Route(contentType: "text/plain; version=0.0.4; charset=utf-8") {
            let snapshot = try await loop.submit { Self.snapshot(state.value) }.get()
            return Array(ServerMetrics.prometheusText(snapshot).utf8)
        }
    }
}
