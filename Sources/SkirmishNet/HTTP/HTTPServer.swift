import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SkirmishWire

/// A small HTTP/1.1 listener: a few GET routes (`/metrics`, the practice page) and one WebSocket endpoint.
///
/// Built on NIO's own HTTP/1 and WebSocket handlers, which is all a metrics endpoint and a game socket need; a web
/// framework would add minutes to every build for nothing these routes use. An upgraded WebSocket channel gets a
/// ``WebSocketPacketCodec`` and is handed to `onWebSocket`, which adds the handler that consumes its packets.
public struct HTTPServer: Sendable {
    /// One GET route: its content type and a function producing the body when it is requested.
    public struct Route: Sendable {
        /// The `Content-Type` header value (`text/html; charset=utf-8`).
        public var contentType: String
        /// Produces the body for each request; a thrown error is answered `500`.
        public var body: @Sendable () async throws -> [UInt8]

        /// A route answering with `contentType` and whatever `body` returns at request time.
        public init(contentType: String, body: @escaping @Sendable () async throws -> [UInt8]) {
            self.contentType = contentType
            self.body = body
        }

        /// A route that always serves the same bytes (static pages and scripts).
        public static func fixed(_ bytes: [UInt8], contentType: String) -> Route {
            Route(contentType: contentType) { bytes }
        }
    }

    /// The bound address, with the real port when 0 was asked for.
    public let localAddress: SocketAddress
    private let channel: any Channel

    /// Binds the listener; port 0 picks a free port (read it from ``localAddress``).
    ///
    /// A WebSocket upgrade whose `Origin` the `origins` policy refuses is answered `403 Forbidden` and never upgraded.
    /// The listener backs off when `accept` fails (`AcceptBackoff`), telling `onAcceptBackoff`. `admit` runs first
    /// for each accepted connection, on its loop: it may add handlers at the head of the pipeline (they see the raw
    /// bytes, before and after an upgrade) or throw to refuse the connection, which is then closed.
    public static func bind(
        host: String, port: Int, group: any EventLoopGroup, routes: [String: Route], webSocketPath: String?,
        origins: OriginPolicy = OriginPolicy(), onWebSocket: (@Sendable (any Channel) -> Void)?,
        admit: (@Sendable (any Channel) throws -> Void)? = nil,
        onAcceptBackoff: (@Sendable (IOError) -> Void)? = nil
    ) async throws -> HTTPServer {
        let upgraders: [any HTTPServerProtocolUpgrader & Sendable] =
            webSocketPath.map { path in
                [
                    NIOWebSocketServerUpgrader(
                        maxFrameSize: WireLimits.maxFrame + 16,
                        shouldUpgrade: { channel, head in
                            let requested = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
                            // Not upgraded: the request goes on to the route handler, which answers 403.
                            let admitted = origins.admits(
                                origin: head.headers.first(name: "origin"), host: head.headers.first(name: "host"))
                            return channel.eventLoop.makeSucceededFuture(
                                requested == path && admitted ? HTTPHeaders() : nil)
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                let pipeline = channel.pipeline.syncOperations
                                let decoder = try pipeline.handler(
                                    type: ByteToMessageHandler<WebSocketFrameDecoder>.self)
                                try pipeline.addHandler(
                                    WebSocketControlFrameGuard(), position: .before(decoder))
                                try pipeline.addHandler(WebSocketPacketCodec(isClient: false))
                                onWebSocket?(channel)
                            }
                        })
                ]
            } ?? []
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        AcceptBackoff { error in onAcceptBackoff?(error) })
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try admit?(channel)
                    let configuration: NIOHTTPServerUpgradeConfiguration = (
                        upgraders: upgraders,
                        completionHandler: { context in
                            context.pipeline.syncOperations.removeHandler(name: RouteHandler.name, promise: nil)
                        }
                    )
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withServerUpgrade: configuration)
                    try channel.pipeline.syncOperations.addHandler(
                        RouteHandler(routes: routes, webSocketPath: webSocketPath, origins: origins),
                        name: RouteHandler.name)
                }
            }
            .bind(host: host, port: port).get()
        guard let address = channel.localAddress else {
            try? await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        return HTTPServer(localAddress: address, channel: channel)
    }

    /// Stops listening (connections already open finish on their own).
    public func close() async throws {
        try await channel.close()
    }
}

/// Serves the GET routes; runs each route's body off the event loop and writes the response back on it.
final class RouteHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let name = "skirmish.routes"

    private let routes: [String: HTTPServer.Route]
    private let webSocketPath: String?
    private let origins: OriginPolicy
    private var head: HTTPRequestHead?

    init(routes: [String: HTTPServer.Route], webSocketPath: String? = nil, origins: OriginPolicy = OriginPolicy()) {
        self.routes = routes
        self.webSocketPath = webSocketPath
        self.origins = origins
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            // A whole request head: the head of the pipeline stops timing it (slow-header connections are closed).
            context.triggerUserOutboundEvent(StreamProgress(pending: false), promise: nil)
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            let path = head.uri.split(separator: "?").first.map(String.init) ?? head.uri
            guard head.method == .GET || head.method == .HEAD else {
                return respond(
                    context: context, status: .methodNotAllowed, type: "text/plain", body: Array("GET only\n".utf8),
                    head: head)
            }
            let origin = head.headers.first(name: "origin")
            if path == webSocketPath, !origins.admits(origin: origin, host: head.headers.first(name: "host")) {
                return respond(
                    context: context, status: .forbidden, type: "text/plain",
                    body: Array(
                        ("WebSocket refused: Origin \(origin ?? "") is not this server's own origin; "
                            + "start the server with --allow-origin \(origin ?? "") to admit it\n").utf8),
                    head: head)
            }
            guard let route = routes[path] else {
                let known = routes.keys.sorted().joined(separator: ", ")
                return respond(
                    context: context, status: .notFound, type: "text/plain",
                    body: Array("no route \(path); this server serves \(known)\n".utf8), head: head)
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let loop = context.eventLoop
            Task {
                let result: Result<[UInt8], any Error>
                do {
                    result = .success(try await route.body())
                } catch {
                    result = .failure(error)
                }
                loop.execute {
                    let (handler, context) = bound.value
                    switch result {
                    case .success(let body):
                        handler.respond(context: context, status: .ok, type: route.contentType, body: body, head: head)
                    case .failure(let error):
                        handler.respond(
                            context: context, status: .internalServerError, type: "text/plain",
                            body: Array("\(error)\n".utf8), head: head)
                    }
                }
            }
        }
    }

    private func respond(
        context: ChannelHandlerContext, status: HTTPResponseStatus, type: String, body: [UInt8], head: HTTPRequestHead
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: "\(body.count)")
        headers.add(name: "Cache-Control", value: "no-store")
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))),
            promise: nil)
        if head.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive { done.whenComplete { [channel = context.channel] _ in channel.close(promise: nil) } }
    }
}
