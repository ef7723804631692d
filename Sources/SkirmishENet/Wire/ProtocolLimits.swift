/// The protocol's numeric limits and the peer constants a conforming implementation shares with libenet.
///
/// Protocol limits are from enet/protocol.h (the anonymous enum at its top); peer and host constants from enet/enet.h
/// (the anonymous enum after `ENetPeerState`) and enet/time.h. They are what both ends assume of each other: the
/// window arithmetic below is how a libenet receiver decides which reliable sequence numbers it will take.
enum ProtocolLimits {
    /// `ENET_PROTOCOL_MINIMUM_MTU`.
    static let minimumMTU = 576
    /// `ENET_PROTOCOL_MAXIMUM_MTU`: also the largest datagram libenet reads (its receive buffer).
    static let maximumMTU = 4096
    /// `ENET_PROTOCOL_MAXIMUM_PACKET_COMMANDS`: commands one datagram carries at most.
    static let maximumPacketCommands = 32
    /// `ENET_PROTOCOL_MINIMUM_WINDOW_SIZE`.
    static let minimumWindowSize: UInt32 = 4096
    /// `ENET_PROTOCOL_MAXIMUM_WINDOW_SIZE`.
    static let maximumWindowSize: UInt32 = 65536
    /// `ENET_PROTOCOL_MINIMUM_CHANNEL_COUNT`.
    static let minimumChannelCount = 1
    /// `ENET_PROTOCOL_MAXIMUM_CHANNEL_COUNT`.
    static let maximumChannelCount = 255
    /// `ENET_PROTOCOL_MAXIMUM_PEER_ID`: the peer id a datagram carries before the peer has one (a connect request).
    static let maximumPeerID: UInt16 = 0xFFF
    /// `ENET_PROTOCOL_MAXIMUM_FRAGMENT_COUNT`.
    static let maximumFragmentCount: UInt32 = 1024 * 1024
    /// The channel id of commands that belong to the connection rather than a channel (connect, ping, disconnect…).
    static let controlChannel: UInt8 = 0xFF

    /// `ENET_HOST_DEFAULT_MTU` in libenet 1.3.17.
    static let defaultMTU = 1400
    /// `ENET_HOST_BANDWIDTH_THROTTLE_INTERVAL`, milliseconds.
    static let bandwidthThrottleInterval: UInt32 = 1000
    /// `ENET_HOST_DEFAULT_MAXIMUM_PACKET_SIZE`: the largest packet libenet sends or accepts.
    static let maximumPacketSize = 32 * 1024 * 1024
    /// `ENET_PEER_DEFAULT_ROUND_TRIP_TIME`, milliseconds: the estimate before the first acknowledgement.
    static let defaultRoundTripTime: UInt32 = 500
    /// `ENET_PEER_DEFAULT_PACKET_THROTTLE`.
    static let defaultPacketThrottle: UInt32 = 32
    /// `ENET_PEER_PACKET_THROTTLE_SCALE`: a throttle of this value lets every unreliable packet through.
    static let packetThrottleScale: UInt32 = 32
    /// `ENET_PEER_PACKET_THROTTLE_COUNTER`: the step of the counter that picks which unreliable packets to drop.
    static let packetThrottleCounter: UInt32 = 7
    /// `ENET_PEER_PACKET_THROTTLE_ACCELERATION`.
    static let packetThrottleAcceleration: UInt32 = 2
    /// `ENET_PEER_PACKET_THROTTLE_DECELERATION`.
    static let packetThrottleDeceleration: UInt32 = 2
    /// `ENET_PEER_PACKET_THROTTLE_INTERVAL`, milliseconds.
    static let packetThrottleInterval: UInt32 = 5000
    /// `ENET_PEER_WINDOW_SIZE_SCALE`: bytes per second of bandwidth that buy one minimum window.
    static let windowSizeScale: UInt32 = 64 * 1024
    /// `ENET_PEER_TIMEOUT_LIMIT`.
    static let timeoutLimit: UInt32 = 32
    /// `ENET_PEER_TIMEOUT_MINIMUM`, milliseconds.
    static let timeoutMinimum: UInt32 = 5000
    /// `ENET_PEER_TIMEOUT_MAXIMUM`, milliseconds.
    static let timeoutMaximum: UInt32 = 30000
    /// `ENET_PEER_PING_INTERVAL`, milliseconds.
    static let pingInterval: UInt32 = 500
    /// `ENET_PEER_UNSEQUENCED_WINDOW_SIZE`: unsequenced groups remembered for duplicate detection.
    static let unsequencedWindowSize: UInt32 = 1024
    /// `ENET_PEER_FREE_UNSEQUENCED_WINDOWS`: how far ahead of the window an unsequenced group may be.
    static let freeUnsequencedWindows: UInt32 = 32
    /// `ENET_PEER_RELIABLE_WINDOWS`: the 16-bit reliable sequence space is cut into this many windows.
    static let reliableWindows: UInt16 = 16
    /// `ENET_PEER_RELIABLE_WINDOW_SIZE`.
    static let reliableWindowSize: UInt16 = 0x1000
    /// `ENET_PEER_FREE_RELIABLE_WINDOWS`: a receiver takes sequence numbers up to this many windows ahead, less one.
    static let freeReliableWindows: UInt16 = 8
    /// `ENET_TIME_OVERFLOW` (enet/time.h): a difference of 32-bit milliseconds this large means the order is reversed.
    static let timeOverflow: UInt32 = 86_400_000
}
