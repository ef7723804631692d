extension ENetConnection {
    /// How a connection connects and what it allows itself: ENet's own settings, with the defaults of
    /// `enet_host_create` and `enet_host_connect` in libenet 1.3.17, the memory bounds of a load-testing client, and
    /// the message codec with its options.
    public struct Configuration: Sendable, Hashable {
        /// The game's messages: see ``ENetMessageCodec``.
        public var codec: Codec
        /// Channels to ask for (`enet_host_connect`'s `channelCount`), clamped to 1…255; the server may grant fewer.
        public var channelCount = 2
        /// This side's downstream bandwidth in bytes per second, 0 for unlimited (`enet_host_create`): it sizes the
        /// server's window toward this client.
        public var incomingBandwidth: UInt32 = 0
        /// This side's upstream bandwidth in bytes per second, 0 for unlimited: it sizes this side's window and
        /// throttles its unreliable packets.
        public var outgoingBandwidth: UInt32 = 0
        /// The largest datagram to send, clamped to 576…4096 (libenet 1.3.17's default, 1400); the server may lower it.
        public var mtu = ProtocolLimits.defaultMTU
        /// Whether datagrams carry libenet's CRC-32 (`host->checksum = enet_crc32`). Both ends must agree: a server
        /// that checks drops datagrams without one, and one that does not misreads them.
        public var checksum = false
        /// The 32-bit data of the connect request (`enet_host_connect`'s `data`), which the server reads in its
        /// connect event.
        public var connectData: UInt32 = 0
        /// Resend timeouts grow to at most this multiple of the first before the peer may be given up
        /// (`enet_peer_timeout`'s `timeoutLimit`, default 32).
        public var timeoutLimit = Int(ProtocolLimits.timeoutLimit)
        /// A reliable command unacknowledged this long, with its timeout at the limit, ends the connection
        /// (`timeoutMinimum`, default 5 s).
        public var timeoutMinimum = Duration.milliseconds(Int(ProtocolLimits.timeoutMinimum))
        /// A reliable command unacknowledged this long ends the connection whatever its timeout (`timeoutMaximum`,
        /// default 30 s). The handshake is bound by the same two, as in libenet.
        public var timeoutMaximum = Duration.milliseconds(Int(ProtocolLimits.timeoutMaximum))
        /// The handshake is given up when no verify-connect came this long after the connect request, with a reason
        /// that says what may be wrong (the server is not listening, or the two ends disagree on checksums); `nil`
        /// leaves it to libenet's own rule (``timeoutMinimum`` and ``timeoutMaximum``, which take 15 to 30 s).
        /// libenet clients give up the same way: its tutorial waits 5 s for the connect event, then resets the peer.
        /// The default stays under the swarm's own 6 s bound on handshakes, so a run reports this reason.
        public var handshakeTimeout: Duration? = .seconds(5)
        /// How long without an acknowledgement before a ping is sent (`enet_peer_ping_interval`, default 500 ms).
        public var pingInterval = Duration.milliseconds(Int(ProtocolLimits.pingInterval))
        /// The throttle interval proposed in the connect request (`enet_peer_throttle_configure`, default 5 s).
        public var packetThrottleInterval = Duration.milliseconds(Int(ProtocolLimits.packetThrottleInterval))
        /// The throttle's acceleration, out of 32 (default 2).
        public var packetThrottleAcceleration = ProtocolLimits.packetThrottleAcceleration
        /// The throttle's deceleration, out of 32 (default 2).
        public var packetThrottleDeceleration = ProtocolLimits.packetThrottleDeceleration
        /// Whether an unreliable or unsequenced message too large for one datagram goes as unreliable fragments
        /// (`ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT`) rather than ENet's default of reliable ones.
        public var unreliableFragments = false
        /// The largest message sent or accepted, bytes (libenet's own limit, 32 MiB, is the ceiling): a larger send is
        /// refused, a larger incoming packet is counted as `oversized_packet` and dropped.
        public var maxMessageSize = 1 << 20
        /// Bytes of messages queued or unacknowledged at most, each command counted with 32 bytes of overhead (so
        /// empty messages count too). Past it an unreliable send is dropped
        /// (`send_dropped`) and a reliable one ends the connection (`ack_timeout`): a peer that cannot keep up.
        public var maxQueuedBytes = 1 << 20
        /// Bytes of incoming packets held for order or reassembly at most. Past it the command is refused
        /// unacknowledged (`incoming_limit`), so the server sends it again later, as libenet does past its
        /// `maximumWaitingData`.
        public var maxIncomingBytes = 1 << 20

        /// ENet's defaults with `codec`.
        public init(codec: Codec) {
            self.codec = codec
        }
    }
}

extension ENetConnection.Configuration where Codec == ENetRawCodec {
    /// ENet's defaults with the raw codec: messages are ``ENetPacket`` values.
    public init() {
        self.init(codec: ENetRawCodec())
    }
}
