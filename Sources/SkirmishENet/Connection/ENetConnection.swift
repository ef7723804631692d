import SkirmishNet
import SkirmishWire

/// One client connection to an ENet 1.3 server, as a value: datagrams and time in; datagrams, the codec's messages
/// and metric events out.
///
/// It is a libenet client peer — the connect and verify-connect handshake with its channel, MTU and window
/// negotiation; reliable, unreliable and unsequenced packets per channel; fragments both ways; acknowledgements with
/// the sent time and libenet's round-trip estimate; pings; the packet throttle and the bandwidth limits a peer must
/// honour; disconnects now, later and with data; libenet's timeouts; the optional CRC-32 — with the wire format of
/// enet/protocol.h and the rules of libenet 1.3.17's protocol.c and peer.c. It never reads a clock and never touches
/// a socket (``ClientProtocol``): a test plays whole sessions, losses and timeouts by hand.
///
/// It is generic over the game's ``ENetMessageCodec``, so a protocol is "ENet + my messages": agents send and
/// receive the codec's `Message`, and ``ENetRawCodec`` sends bytes with no code at all.
///
/// Every queue and buffer is bounded (``Configuration/maxQueuedBytes``, ``Configuration/maxIncomingBytes``), and bad
/// input is counted by kind (``ClientMetric/error(kind:)``), never fatal. Each entry point sends what is due at its
/// end, so a call's actions hold its datagrams: one for a send, the acknowledgements for a receive.
///
/// Differences from libenet, each deliberate: a verify-connect with another connect id is counted
/// (`stale_verify_connect`) and ignored rather than ending the connection, since over UDP it is most likely a late
/// answer to an earlier connection from the same port; no compressor is offered (a compressed datagram is counted
/// and dropped, as libenet drops it without one); at most one reliable window (4096 commands) per channel is in
/// flight, where libenet tracks windows in use — both keep the sender inside what a libenet receiver takes.
public struct ENetConnection<Codec: ENetMessageCodec>: ClientProtocol, Sendable {
    /// The codec's messages.
    public typealias Message = Codec.Message
    /// What the agent learns on connecting.
    public typealias Established = ENetSession

    /// Where the connection is in its life (libenet's `ENetPeerState`, as a client sees it).
    enum Phase: Sendable, Hashable {
        /// Created; ``start(now:into:)`` sends the connect request.
        case idle
        /// The connect request is out (`ENET_PEER_STATE_CONNECTING`).
        case connecting
        /// The verify-connect arrived (`ENET_PEER_STATE_CONNECTED`).
        case connected
        /// Closing once every queued packet is acknowledged, then disconnecting with `data`.
        case disconnectLater(data: UInt32)
        /// A disconnect with `data` is out and awaits its acknowledgement (`ENET_PEER_STATE_DISCONNECTING`).
        case disconnecting(data: UInt32)
        /// The server disconnected; the acknowledgement goes out before the connection ends
        /// (`ENET_PEER_STATE_ACKNOWLEDGING_DISCONNECT`).
        case acknowledgingDisconnect(data: UInt32)
        /// Over.
        case closed
    }

    /// What the connection was made with (clamped where ENet clamps).
    public let configuration: Configuration
    var codec: Codec
    var phase = Phase.idle

    // MARK: Clock

    /// The instant ENet's millisecond clock counts from: the start.
    var origin = Instant.zero
    /// ENet's `serviceTime`: milliseconds since ``origin`` at the current call.
    var serviceTime: UInt32 = 0
    /// When the connect request went out, for the handshake time.
    var startedAt = Instant.zero
    /// The instant of the current call.
    var now = Instant.zero

    // MARK: Negotiated

    /// This side's id for the server, sent in the connect request; a client has one peer, so 0.
    let incomingPeerID: UInt16 = 0
    /// The server's id for this side, from the verify-connect; ``ProtocolLimits/maximumPeerID`` until then.
    var outgoingPeerID = ProtocolLimits.maximumPeerID
    var incomingSessionID: UInt8 = 0xFF
    var outgoingSessionID: UInt8 = 0xFF
    /// Chosen from the setup's seed, echoed by the server, the checksums' seed.
    let connectID: UInt32
    /// What the next connection's connect id is drawn from, after a ``resume(now:into:)``.
    var random: SeededRandom
    var mtu: Int
    var windowSize: UInt32
    var channels: [ChannelState] = []
    var peerIncomingBandwidth: UInt32 = 0
    var peerOutgoingBandwidth: UInt32 = 0

    // MARK: Outgoing

    /// Sequence numbers of the commands on the control channel (connect, ping, disconnect…).
    var outgoingReliableSequenceNumber: UInt16 = 0
    var outgoingUnsequencedGroup: UInt16 = 0
    /// Commands waiting to be sent, in order.
    var outgoing: [OutgoingCommand] = []
    /// Reliable commands sent and not yet acknowledged, in the order sent.
    var sentReliable: [OutgoingCommand] = []
    /// Scratch for rebuilding ``outgoing`` while a datagram is packed; kept for its storage.
    var keptScratch: [OutgoingCommand] = []
    var acknowledgements: [PendingAcknowledgement] = []
    var reliableDataInTransit = 0
    var packetThrottleCounter: UInt32 = 0
    var pool = PayloadPool()
    /// Payload bytes queued or in flight, against ``Configuration/maxQueuedBytes``.
    var queuedBytes = 0

    // MARK: Incoming

    var unsequencedWindow = UnsequencedWindow()
    /// Bytes held for order or reassembly, against ``Configuration/maxIncomingBytes``.
    var heldBytes = 0

    // MARK: Timers and estimates

    var roundTrip = RoundTripEstimate()
    /// When the last acknowledgement arrived (libenet's `lastReceiveTime`); `nil` before the first.
    var lastReceiveTime: UInt32?
    /// The oldest sent time among commands that timed out since the last acknowledgement.
    var earliestTimeout: UInt32?
    /// When the oldest unacknowledged reliable command times out.
    var nextTimeout: UInt32 = 0
    var bandwidthThrottleEpoch: UInt32 = 0
    /// Set on connecting: this side's bandwidth limits go to the server at the next bandwidth throttle.
    var recalculateBandwidthLimits = false
    /// Bytes queued toward the server since the last bandwidth throttle (libenet's `outgoingDataTotal`).
    var outgoingDataTotal: UInt32 = 0
    /// Datagrams during the handshake that failed the checksum: evidence that the ends disagree on it.
    var handshakeChecksumFailures = 0
    /// Connect requests sent (the first and its resends), for the handshake timeout's message.
    var connectAttempts = 0
    /// The cached ``nextDeadline``.
    var deadline = Instant.distantFuture

    // MARK: Per-call scratch

    /// Datagram header bytes not yet counted in a `sent` metric: the first packet counted in a datagram takes its
    /// header, and those of earlier datagrams that counted none (fragments after the first, resends).
    var unattributedHeaderBytes = 0
    /// The same for datagrams received (a fragment's datagram counts nothing until its packet is whole).
    var unattributedReceivedHeaderBytes = 0
    /// Metrics produced while packing a datagram (the actions are busy then), recorded right after.
    var pendingMetrics: [ClientMetric] = []
    /// Packet throttle changes not yet reported.
    var pendingThrottleChanges = 0

    /// The protocol's name (the codec's ``ENetMessageCodec/protocolName``), transport and every series it reports
    /// (the same for every codec).
    public static var description: ProtocolDescription {
        var description = MetricCatalog.description
        description.name = Codec.protocolName
        return description
    }

    /// A connection that has sent nothing yet; its connect id comes from `setup.seed`.
    public init(configuration: Configuration, setup: ConnectionSetup) {
        self.init(configuration: configuration, random: SeededRandom(seed: setup.seed))
    }

    /// A connection whose connect id is the next draw of `random`.
    init(configuration: Configuration, random: SeededRandom) {
        var configuration = configuration
        configuration.channelCount = min(
            max(configuration.channelCount, ProtocolLimits.minimumChannelCount), ProtocolLimits.maximumChannelCount)
        configuration.mtu = min(max(configuration.mtu, ProtocolLimits.minimumMTU), ProtocolLimits.maximumMTU)
        configuration.maxMessageSize = min(max(configuration.maxMessageSize, 0), ProtocolLimits.maximumPacketSize)
        configuration.timeoutLimit = max(configuration.timeoutLimit, 1)
        self.configuration = configuration
        codec = configuration.codec
        var random = random
        connectID = UInt32(truncatingIfNeeded: random.next())
        self.random = random
        mtu = configuration.mtu
        windowSize = Self.windowSize(forBandwidth: configuration.outgoingBandwidth)
        roundTrip.packetThrottleInterval = Self.milliseconds(configuration.packetThrottleInterval)
        roundTrip.packetThrottleAcceleration = configuration.packetThrottleAcceleration
        roundTrip.packetThrottleDeceleration = configuration.packetThrottleDeceleration
    }

    /// When ``tick(now:into:)`` next has work: a resend or timeout, a ping, the bandwidth throttle.
    public var nextDeadline: Instant { deadline }

    /// The connection's round-trip estimate: libenet's `roundTripTime`, 500 ms until the first acknowledgement.
    public var roundTripTime: Duration { .milliseconds(Int(roundTrip.roundTripTime)) }

    /// Whether the server accepted the connection and it has not begun to close.
    public var isConnected: Bool { phase == .connected }

    // MARK: ClientProtocol

    /// Sends the connect request.
    public mutating func start(now: Instant, into actions: inout ClientActions<Self>) {
        guard phase == .idle else { return }
        origin = now
        startedAt = now
        self.now = now
        serviceTime = 0
        bandwidthThrottleEpoch = 0
        channels = Array(repeating: ChannelState(), count: configuration.channelCount)
        phase = .connecting
        let parameters = ConnectParameters(
            outgoingPeerID: incomingPeerID, incomingSessionID: incomingSessionID, outgoingSessionID: outgoingSessionID,
            mtu: UInt32(mtu), windowSize: windowSize, channelCount: UInt32(configuration.channelCount),
            incomingBandwidth: configuration.incomingBandwidth, outgoingBandwidth: configuration.outgoingBandwidth,
            packetThrottleInterval: roundTrip.packetThrottleInterval,
            packetThrottleAcceleration: roundTrip.packetThrottleAcceleration,
            packetThrottleDeceleration: roundTrip.packetThrottleDeceleration, connectID: connectID)
        queueControl(.connect(parameters, data: configuration.connectData), acknowledge: true)
        finishCall(into: &actions)
    }

    /// Takes one datagram from the server.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>)
    {
        guard advance(to: now) else { return }
        handleDatagram(bytes, into: &actions)
        finishCall(into: &actions)
    }

    /// Queues `message` where the codec routes it, and sends what is due.
    public mutating func send(_ message: Message, now: Instant, into actions: inout ClientActions<Self>) {
        guard advance(to: now) else {
            return actions.record(.error(kind: MetricCatalog.Failure.sendNotConnected.rawValue))
        }
        queueMessage(message, into: &actions)
        finishCall(into: &actions)
    }

    /// Resends what timed out, pings, runs the bandwidth throttle, and gives up a silent server.
    public mutating func tick(now: Instant, into actions: inout ClientActions<Self>) {
        guard advance(to: now) else { return }
        finishCall(into: &actions)
    }

    /// Leaves at once: ``disconnectNow(data:now:into:)`` with data 0.
    public mutating func close(now: Instant, into actions: inout ClientActions<Self>) {
        disconnectNow(data: 0, now: now, into: &actions)
    }

    /// The socket failed: the connection is over.
    public mutating func transportFailed(_ reason: String, now: Instant, into actions: inout ClientActions<Self>) {
        guard phase != .closed else { return }
        end(.transport(reason), into: &actions)
    }

    /// The socket went away without a goodbye: ENet has no resume, so the connection ends (kind `local`) and the
    /// server times this peer out.
    public mutating func suspend(now: Instant, into actions: inout ClientActions<Self>) {
        switch phase {
        case .idle, .closed:
            break
        case .connecting, .connected, .disconnectLater, .disconnecting, .acknowledgingDisconnect:
            end(
                CloseReason(
                    kind: CloseReason.local.kind, detail: "suspended: ENet has no resume, a new connection follows",
                    isOutage: false),
                into: &actions)
        }
    }

    /// A new socket after ``suspend(now:into:)``: a new connection from scratch, with the next connect id (ENet has no
    /// way to take a peer's place back).
    public mutating func resume(now: Instant, into actions: inout ClientActions<Self>) {
        self = ENetConnection(configuration: configuration, random: random)
        start(now: now, into: &actions)
    }

    // MARK: Disconnecting, as ENet offers it

    /// Asks the server to end the connection with `data` (`enet_peer_disconnect`): queued packets are dropped, a
    /// reliable disconnect goes out, and once the server acknowledges it (or the timeout passes) the connection ends
    /// with a ``ClientEvent/closed(_:)`` of kind `local`. Before the verify-connect it ends at once.
    public mutating func disconnect(data: UInt32, now: Instant, into actions: inout ClientActions<Self>) {
        guard advance(to: now) else { return }
        beginDisconnect(data: data, into: &actions)
        finishCall(into: &actions)
    }

    /// Disconnects with `data` once every queued packet has been sent and acknowledged (`enet_peer_disconnect_later`);
    /// meanwhile nothing more can be sent and arriving packets are acknowledged but not delivered.
    public mutating func disconnectLater(data: UInt32, now: Instant, into actions: inout ClientActions<Self>) {
        guard advance(to: now) else { return }
        switch phase {
        case .connected, .disconnectLater:
            if outgoing.isEmpty && sentReliable.isEmpty {
                beginDisconnect(data: data, into: &actions)
            } else {
                phase = .disconnectLater(data: data)
            }
        case .idle, .connecting, .disconnecting, .acknowledgingDisconnect, .closed:
            beginDisconnect(data: data, into: &actions)
        }
        finishCall(into: &actions)
    }

    /// Sends an unacknowledged disconnect with `data` and ends the connection at once, with no event
    /// (`enet_peer_disconnect_now`): the server may never hear it, and then times this peer out.
    public mutating func disconnectNow(data: UInt32, now: Instant, into actions: inout ClientActions<Self>) {
        guard advance(to: now) else { return }
        switch phase {
        case .connecting, .connected, .disconnectLater, .acknowledgingDisconnect:
            resetQueues()
            queueControl(.disconnect(data: data), acknowledge: false, unsequenced: true)
            flush(into: &actions)
        case .idle, .disconnecting, .closed:
            break
        }
        resetQueues()
        phase = .closed
        deadline = .distantFuture
    }

    // MARK: Helpers every entry point shares

    /// Moves ENet's clock to `now`; `false` when the connection takes no more calls.
    mutating func advance(to now: Instant) -> Bool {
        guard phase != .closed, phase != .idle else { return false }
        self.now = max(self.now, now)
        let elapsed = now.nanoseconds > origin.nanoseconds ? (now.nanoseconds - origin.nanoseconds) / 1_000_000 : 0
        serviceTime = max(serviceTime, UInt32(truncatingIfNeeded: min(elapsed, UInt64(UInt32.max - 1))))
        return true
    }

    /// Sends what is due and works out the next deadline: the end of every entry point.
    mutating func finishCall(into actions: inout ClientActions<Self>) {
        runBandwidthThrottle()
        flush(into: &actions)
        updateDeadline()
        if pendingThrottleChanges > 0 {
            actions.record(.event(index: MetricCatalog.Event.throttleChanges.rawValue, count: pendingThrottleChanges))
            pendingThrottleChanges = 0
        }
    }

    /// Ends the connection on its own account with `reason`.
    mutating func end(_ reason: CloseReason, into actions: inout ClientActions<Self>) {
        guard phase != .closed else { return }
        resetQueues()
        phase = .closed
        deadline = .distantFuture
        actions.closed(reason)
    }

    /// Drops every queued, unacknowledged and held packet (libenet's `enet_peer_reset_queues`).
    mutating func resetQueues() {
        for command in outgoing where command.slot >= 0 { pool.release(command.slot) }
        for command in sentReliable where command.slot >= 0 { pool.release(command.slot) }
        outgoing.removeAll(keepingCapacity: true)
        sentReliable.removeAll(keepingCapacity: true)
        acknowledgements.removeAll(keepingCapacity: true)
        for index in channels.indices {
            for held in channels[index].heldReliable { releaseHeld(held) }
            for held in channels[index].heldUnreliable { releaseHeld(held) }
            channels[index].heldReliable.removeAll()
            channels[index].heldUnreliable.removeAll()
            channels[index].reliableInFlight = 0
        }
        reliableDataInTransit = 0
        queuedBytes = 0
        heldBytes = 0
    }

    /// Returns a held packet's storage to the pool.
    mutating func releaseHeld(_ held: HeldPacket) {
        pool.release(held.slot)
        if held.bitmapSlot >= 0 { pool.release(held.bitmapSlot) }
    }

    /// ENet's window for an upstream bandwidth (host.c, `enet_host_connect`): a minimum window per 64 KiB/s,
    /// clamped; unlimited bandwidth takes the largest.
    static func windowSize(forBandwidth bandwidth: UInt32) -> UInt32 {
        guard bandwidth != 0 else { return ProtocolLimits.maximumWindowSize }
        let size = (bandwidth / ProtocolLimits.windowSizeScale) * ProtocolLimits.minimumWindowSize
        return min(max(size, ProtocolLimits.minimumWindowSize), ProtocolLimits.maximumWindowSize)
    }

    /// A duration in ENet's whole milliseconds, clamped to its 32 bits.
    static func milliseconds(_ duration: Duration) -> UInt32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let value = seconds.multipliedReportingOverflow(by: 1000)
        guard !value.overflow else { return UInt32.max }
        return UInt32(clamping: value.partialValue + attoseconds / 1_000_000_000_000_000)
    }

    /// The instant ENet's clock reads `milliseconds`.
    func instant(_ milliseconds: UInt32) -> Instant {
        origin.advanced(byNanoseconds: Int64(milliseconds) * 1_000_000)
    }
}
