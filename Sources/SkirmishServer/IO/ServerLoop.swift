import NIOCore
import SkirmishTelemetry
import SkirmishWire

/// The loop-confined home of a ``ServerCore``: it feeds the core from the channels, writes the core's outbox, and
/// ticks the core at 60 Hz on deadlines fixed in advance.
///
/// Only ever touched on `loop` (it is held in a `NIOLoopBound`), so it needs no lock.
final class ServerLoop {
    let loop: any EventLoop
    var core: ServerCore
    var udp: (any Channel)?
    private var streams: [UInt64: any Channel] = [:]
    private var nextStream: UInt64 = 1
    private var tickStart = NIODeadline.now()
    private var tickCount: Int64 = 0
    private var tickTask: Scheduled<Void>?
    private var touched: [any Channel] = []
    /// Where each datagram of the flush in progress lies in its shared buffer (reused between flushes).
    private var spans: [(start: Int, length: Int)] = []
    private var stopped = false
    /// Time from a tick's start to its snapshots being written, per tick (`skirmish_server_tick_duration_seconds`).
    private(set) var tickDurations = HistogramValue(scale: .seconds)

    /// The 60 Hz period, in nanoseconds, as an exact fraction so that tick k is due at start + k · 10⁹ / 60.
    private static let ticksPerSecond: Int64 = 60

    init(loop: any EventLoop, core: ServerCore) {
        self.loop = loop
        self.core = core
    }

    // MARK: Streams

    func register(stream channel: any Channel) -> ConnectionID {
        let id = nextStream
        nextStream &+= 1
        streams[id] = channel
        return .stream(id)
    }

    func unregister(_ connection: ConnectionID) {
        guard case .stream(let id) = connection, streams.removeValue(forKey: id) != nil else { return }
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
        tickDurations.record(Double((NIODeadline.now() - now).nanoseconds) / 1e9)
        scheduleNextTick()
    }

    // MARK: Output

    /// Writes everything the core queued, then flushes each channel once.
    ///
    /// Datagrams are encoded back to back into one buffer and written as slices of it, so a tick's thousand
    /// snapshots cost one allocation instead of a thousand; the outbox's own storage is handed back to the core.
    func flush() {
        guard !core.outbox.isEmpty else { return }
        var outbox = core.outbox
        core.outbox = []
        var closing: [any Channel] = []
        if let udp {
            // Locals, not properties of this class: each property access would be a dynamic exclusivity check.
            var buffer = udp.allocator.buffer(capacity: 256 * outbox.count)
            var spans = self.spans
            self.spans = []
            spans.removeAll(keepingCapacity: true)
            for outgoing in outbox {
                guard case .datagram = outgoing.connection else { continue }
                let start = buffer.writerIndex
                let written = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: WireLimits.maxDatagram) {
                    (try? outgoing.packet.encode(into: $0)) ?? 0
                }
                spans.append((start, written))
            }
            var next = 0
            var bytes = 0
            for outgoing in outbox {
                guard case .datagram(let address) = outgoing.connection else { continue }
                let (start, written) = spans[next]
                next += 1
                guard written > 0, let slice = buffer.getSlice(at: start, length: written) else { continue }
                bytes += written
                udp.write(AddressedEnvelope(remoteAddress: address, data: slice), promise: nil)
            }
            core.wrote(bytes: bytes)
            self.spans = spans
            if next > 0 { markTouched(udp) }
        }
        for outgoing in outbox {
            guard case .stream(let id) = outgoing.connection, let channel = streams[id] else { continue }
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

    private func markTouched(_ channel: any Channel) {
        if !touched.contains(where: { $0 === channel }) { touched.append(channel) }
    }

    // MARK: Shutdown

    /// Sends ServerQuit to every player, writes it, and stops ticking; returns the stream channels to close.
    func stop() -> [any Channel] {
        stopped = true
        tickTask?.cancel()
        core.shutdown(now: .now())
        flush()
        return Array(streams.values)
    }
}
