import Logging
import NIOCore
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire

#if canImport(Glibc)
    import Glibc
#endif

/// The loop-confined home of a ``ServerCore``: it feeds the core from the channels, writes the core's outbox, and
/// ticks the core at 60 Hz on deadlines fixed in advance.
///
/// Only ever touched on `loop` (it is held in a `NIOLoopBound`), so it needs no lock.
final class ServerLoop {
    let loop: any EventLoop
    var core: ServerCore
    /// The UDP socket, while it is open.
    var datagrams: DatagramListener?
    private var streams: [UInt64: any Channel] = [:]
    /// Connections open over the TCP and HTTP listeners, in all, per host and per prefix.
    private(set) var connections: ConnectionCaps
    /// Connections closed since the allocator last gave free memory back (see ``release(_:)``).
    private var closedSinceTrim = 0
    private var trim: Scheduled<Void>?
    private var nextStream: UInt64 = 1
    private var tickStart = NIODeadline.now()
    private var tickCount: Int64 = 0
    private var tickTask: Scheduled<Void>?
    private var touched: [any Channel] = []
    /// Stream channels whose peer stopped reading (NIO's write buffer above its high-water mark), since when.
    private var unwritableSince: [UInt64: NIODeadline] = [:]
    /// How long a stream may stay unwritable before it is closed as a slow reader.
    static let slowReaderLimit = TimeAmount.seconds(5)
    private var stopped = false
    /// Time one 60 Hz tick took, from its start to its packets being written (`skirmish_server_tick_seconds`): one
    /// sample per tick the core ran, so its count equals the core's tick count.
    private(set) var tickDurations = HistogramValue(scale: .seconds)

    /// The 60 Hz period, in nanoseconds, as an exact fraction so that tick k is due at start + k · 10⁹ / 60.
    private static let ticksPerSecond: Int64 = 60

    /// Where the server logs: start and stop, rejected input (rate-limited, see ``logRejections(now:)``) and, at
    /// debug, streams opening and closing.
    let logger: Logger
    /// One line per rejection reason per interval at most, whatever the flood.
    var rejectionLog: LogRateLimiter<Rejection>
    /// The rejection counters as of the last ``logRejections(now:)``.
    var loggedRejections: [UInt64]
    /// Per game, the desyncs its rules reported as of the last look (`skirmish_server_desyncs_total`; e.g. Suns tallies).
    var loggedDesyncs: [GameKind: UInt64] = [:]
    /// Ticks since rejections were last looked at (they are looked at once a second).
    private var ticksSinceRejectionCheck = 0

    init(
        loop: any EventLoop, core: ServerCore, logger: Logger = Logger(label: "skirmish.server"),
        rejectionLogInterval: TimeAmount = .seconds(10)
    ) {
        self.loop = loop
        self.core = core
        connections = ConnectionCaps(core.configuration.connections, hosts: core.configuration.hostLimits)
        self.logger = logger
        rejectionLog = LogRateLimiter(interval: .nanoseconds(rejectionLogInterval.nanoseconds))
        loggedRejections = core.stats.rejected
    }

    // MARK: Streams

    func register(stream channel: any Channel) -> ConnectionID {
        let id = nextStream
        nextStream &+= 1
        streams[id] = channel
        let connection = ConnectionID.stream(id)
        logger.debug(
            "stream opened",
            metadata: ["peer.addr": "\(channel.remoteAddress.map { "\($0)" } ?? "unknown")", "stream.id": "\(id)"])
        core.streamOpened(connection, from: channel.remoteAddress.flatMap(DatagramAddress.init), now: .now())
        return connection
    }

    // MARK: Connection caps

    /// A connection was accepted: admits it under the caps (and guards it) or counts and throws why not.
    ///
    /// `http` says it came to the HTTP listener: unless it upgrades to a WebSocket, it is closed once it has been
    /// open ``ServerCore/streamHandshakeLimit`` (as a TCP connection without a seat is), after its current response.
    func admit(_ channel: any Channel, http: Bool = false) throws {
        let host = channel.remoteAddress.flatMap(DatagramAddress.init).map(SourceHost.init)
        if let refusal = connections.admit(host) {
            core.connectionRefused(refusal)
            throw ConnectionRefused(reason: refusal)
        }
        // Released when the channel closes, registered before anything that can throw: a failed admission closes
        // the channel too, and its place must come back.
        channel.closeFuture.hop(to: loop).assumeIsolated().whenComplete { [self] _ in release(host) }
        try channel.pipeline.syncOperations.addHandler(
            ConnectionGuard(
                server: NIOLoopBound(self, eventLoop: loop), limits: connections.limits,
                seatLimit: http ? ServerCore.streamHandshakeLimit : nil),
            position: .first)
    }

    private func release(_ host: SourceHost?) {
        connections.release(host)
        closedSinceTrim += 1
        if closedSinceTrim >= Self.trimAfterClosing, trim == nil {
            // Half a second later, when a wave of closes (a flood timed out, a swarm left) is over.
            trim = loop.assumeIsolated().scheduleTask(in: .milliseconds(500)) { [self] in
                trim = nil
                closedSinceTrim = 0
                // glibc keeps what the connections' buffers freed: 2,000 connections that each sent half of a 64 KiB
                // frame left 140 MB resident after they closed.
                FreeHeap.release()
            }
        }
    }

    /// Closed connections after which the allocator is asked to give back what they freed.
    static let trimAfterClosing = 256

    /// The listener backed off after `accept` failed (out of descriptors, most often).
    func acceptBackedOff() { core.connectionRefused(.acceptBackoff) }

    func unregister(_ connection: ConnectionID) {
        guard case .stream(let id) = connection, streams.removeValue(forKey: id) != nil else { return }
        unwritableSince[id] = nil
        logger.debug("stream closed", metadata: ["stream.id": "\(id)"])
        core.streamClosed(connection, now: .now())
        flush()
    }

    // MARK: Ticking

    func startTicking() {
        tickStart = .now()
        tickCount = 0
        core.noteTickAnchor(tickStart)
        scheduleNextTick()
    }

    private func scheduleNextTick() {
        guard !stopped else { return }
        tickCount += 1
        let due = tickStart + .nanoseconds(tickCount * 1_000_000_000 / Self.ticksPerSecond)
        tickTask = loop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            onTick(due: due)
        }
    }

    private func onTick(due: NIODeadline) {
        let now = NIODeadline.now()
        core.tick(now: now)
        // A stalled loop catches up a few ticks at most, then re-anchors instead of bursting.
        var caughtUp = 0
        while now - tickStart >= .nanoseconds((tickCount + 1) * 1_000_000_000 / Self.ticksPerSecond) {
            if caughtUp == 3 {
                core.noteLateTick()
                tickStart = now
                tickCount = 0
                core.noteTickAnchor(tickStart)
                break
            }
            tickCount += 1
            caughtUp += 1
            core.tick(now: now)
        }
        flush()
        // The wake-up's time shared equally by the ticks it ran: one sample per tick, their sum the time spent.
        let share = (NIODeadline.now() - now).seconds / Double(caughtUp + 1)
        for _ in 0...caughtUp { tickDurations.record(share) }
        ticksSinceRejectionCheck += 1 + caughtUp
        if ticksSinceRejectionCheck >= Int(Self.ticksPerSecond) {
            ticksSinceRejectionCheck = 0
            logRejections(now: now)
        }
        scheduleNextTick()
    }

    // MARK: Output

    /// Writes everything the core queued, then flushes each stream channel once.
    ///
    /// Datagrams go out through the ``DatagramListener`` with `sendmmsg`, up to 1,024 per system call, encoded into
    /// buffers it allocated once; the outbox's own storage is handed back to the core. A tick's thousands of snapshots
    /// thus cost a few system calls and no allocation.
    func flush() {
        guard !core.outbox.isEmpty else { return }
        var outbox = core.outbox
        core.outbox = []
        var closing: [any Channel] = []
        if let datagrams {
            let bytes = datagrams.write(outbox) { match, bytes in core.wrote(bytes: bytes, match: match) }
            core.wrote(bytes: bytes)
        }
        let now = NIODeadline.now()
        for outgoing in outbox {
            guard case .stream(let id) = outgoing.connection, let channel = streams[id] else { continue }
            // A peer that stops reading must not grow the server's buffers: while its channel is above the
            // high-water mark, unreliable packets are dropped (as the network drops them), and past the limit it is
            // closed. Reliable ones still go: a stream has no resends.
            if !channel.isWritable {
                let since = unwritableSince[id] ?? now
                unwritableSince[id] = since
                if now - since >= Self.slowReaderLimit {
                    // Closed once: `unregister` forgets it when the close completes.
                    if channel.isActive, since != .distantFuture {
                        core.connectionRefused(.slowReader)
                        unwritableSince[id] = .distantFuture
                        channel.close(promise: nil)
                    }
                    continue
                }
                if outgoing.packet.message.type.delivery == .unreliable { continue }
            } else if unwritableSince[id] != nil {
                unwritableSince[id] = nil
            }
            channel.write(outgoing.packet, promise: nil)
            markTouched(channel)
            if outgoing.closeAfter { closing.append(channel) }
        }
        outbox.removeAll(keepingCapacity: true)
        if core.outbox.isEmpty { core.outbox = outbox }
        for channel in touched { channel.flush() }
        touched.removeAll(keepingCapacity: true)
        for channel in closing { channel.close(promise: nil) }
    }

    // MARK: Datagrams

    /// One datagram NIO read (the first of a readable spell), then the rest of what is waiting, read in batches.
    func receive(_ bytes: UnsafeRawBufferPointer, from address: SocketAddress) {
        if let address = DatagramAddress(address) {
            core.receive(bytes, from: .datagram(address), now: .now())
        }
        datagrams?.drain { bytes, address, now in core.receive(bytes, from: .datagram(address), now: now) }
    }

    /// The UDP socket is closing: nothing may be read from or written to its descriptor any more.
    func datagramsClosed() { datagrams = nil }

    private func markTouched(_ channel: any Channel) {
        if !touched.contains(where: { $0 === channel }) { touched.append(channel) }
    }

    // MARK: Shutdown

    /// Sends ServerQuit to every player, writes it, and stops ticking; returns the stream channels to close.
    func stop() -> [any Channel] {
        stopped = true
        tickTask?.cancel()
        logRejections(now: .now(), final: true)
        logger.info(
            "server stopping",
            metadata: [
                "sessions.opened": "\(core.stats.sessionsOpened)", "sessions.closed": "\(core.stats.sessionsClosed)",
                "streams.open": "\(streams.count)", "rejected.total": "\(core.stats.totalRejected)",
            ])
        core.shutdown(now: .now())
        flush()
        datagrams = nil
        return Array(streams.values)
    }
}
