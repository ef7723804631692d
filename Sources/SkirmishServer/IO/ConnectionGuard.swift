import NIOCore
import SkirmishNet

/// The head of every TCP, WebSocket and HTTP connection's pipeline: counts the game bytes it reads, closes it when it
/// is idle or a frame stays half-sent, and frees its place under the connection caps when it closes.
///
/// Game bytes: everything read from a TCP connection, and what an HTTP connection reads once it has upgraded to a
/// WebSocket (frames, framing included). A `/metrics` scrape, the practice page and the upgrade request itself are not
/// game traffic and are not counted in `skirmish_server_bytes_received_total`, so a scraper does not move the figure
/// it reads.
///
/// Idle: nothing read for ``ServerConfiguration/ConnectionLimits/idleTimeout`` (a half-open connection, whose peer
/// vanished, reads nothing forever). Half-sent: bytes of a frame or request head arrived but the unit did not
/// complete within ``ServerConfiguration/ConnectionLimits/frameTimeout`` — the decoders report each whole unit with a
/// ``SkirmishNet/StreamProgress`` event. One timer per connection fires at most once per frame timeout and reads cost
/// no timer work, so a half-sent unit is closed between one and two frame timeouts after its first byte.
///
/// No seat: an HTTP connection that has not upgraded to a WebSocket by its `seatLimit` is asked to quiesce (NIO's
/// `HTTPServerPipelineHandler` closes it once the response in progress is written, at once when none is) and closed
/// outright one frame timeout later. Keep-alive requests, each well within the idle timeout, no longer hold a place
/// under the caps for ever; a `/metrics` scraper opens a new connection for a later scrape.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private let server: NIOLoopBound<ServerLoop>
    private let idleTimeout: TimeAmount
    private let frameTimeout: TimeAmount
    private var lastRead = NIODeadline.now()
    /// When the first byte of an unfinished unit arrived; `nil` between units.
    private var pendingSince: NIODeadline?
    private var timer: Scheduled<Void>?
    /// When an HTTP connection without an upgrade is asked to close; `nil` for TCP, and once it upgraded.
    private var seatDeadline: NIODeadline?
    private let seatLimit: TimeAmount?
    /// When an HTTP connection asked to close is closed whatever it is doing.
    private var closeDeadline: NIODeadline?
    /// Whether what this connection reads is game traffic: from the start on TCP, once upgraded on HTTP.
    private var countsReads: Bool

    init(server: NIOLoopBound<ServerLoop>, limits: ServerConfiguration.ConnectionLimits, seatLimit: TimeAmount?) {
        self.server = server
        idleTimeout = limits.idleTimeout
        frameTimeout = limits.frameTimeout
        self.seatLimit = seatLimit
        // Only an HTTP connection has a seat limit; a TCP connection carries nothing but packets.
        countsReads = seatLimit == nil
    }

    func handlerAdded(context: ChannelHandlerContext) {
        lastRead = .now()
        seatDeadline = seatLimit.map { lastRead + $0 }
        arm(context, at: min(lastRead + min(idleTimeout, frameTimeout), seatDeadline ?? .distantFuture))
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // An HTTP connection asks the pipeline until it finds the WebSocket codec (a few requests at most); a WebSocket
        // and a TCP connection count every read without asking.
        if !countsReads, upgraded(context) { countsReads = true }
        if countsReads { server.value.core.read(bytes: unwrapInboundIn(data).readableBytes) }
        lastRead = .now()
        if pendingSince == nil { pendingSince = lastRead }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let progress = event as? StreamProgress else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        // A unit still pending keeps the time of its first byte: it must complete within one frame timeout.
        pendingSince = progress.pending ? (pendingSince ?? .now()) : nil
        promise?.succeed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }

    private func arm(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.check(context)
        }
    }

    private func check(_ context: ChannelHandlerContext) {
        timer = nil
        guard context.channel.isActive else { return }
        let now = NIODeadline.now()
        if let pendingSince, now - pendingSince >= frameTimeout {
            return close(context, counting: .frameTimeout)
        }
        if now - lastRead >= idleTimeout { return close(context, counting: .idleTimeout) }
        if let deadline = closeDeadline, now >= deadline {
            // An upgrade that was under way when the connection was asked to close: a WebSocket now, which stays.
            guard upgraded(context) else { return close(context, counting: nil) }
            closeDeadline = nil
        }
        if let deadline = seatDeadline, now >= deadline {
            seatDeadline = nil
            // Upgraded: a WebSocket, which the core closes if it takes no seat in time.
            // Not counted as a refusal: a browser keeps the page's connection open after loading it, and ending an
            // HTTP keep-alive is the server's housekeeping (Apache's default ends one after 5 s), not bad input.
            if !upgraded(context) {
                closeDeadline = now + frameTimeout
                context.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
                guard context.channel.isActive else { return }
            }
        }
        let next = min(lastRead + idleTimeout, now + frameTimeout)
        arm(context, at: min(next, seatDeadline ?? .distantFuture, closeDeadline ?? .distantFuture))
    }

    /// Whether the connection upgraded to a WebSocket: the upgrade adds the packet codec in the same step as NIO's
    /// frame decoder (the core's handler comes later, in a task of its own).
    private func upgraded(_ context: ChannelHandlerContext) -> Bool {
        (try? context.pipeline.syncOperations.handler(type: WebSocketPacketCodec.self)) != nil
    }

    /// Closes the connection, counting it as refused for `reason` when there is one.
    private func close(_ context: ChannelHandlerContext, counting reason: Rejection?) {
        if let reason { server.value.core.connectionRefused(reason) }
        server.value.flush()
        context.close(promise: nil)
    }
}
