/// What a connect request and its verify-connect answer negotiate: the fields `ENetProtocolConnect` and
/// `ENetProtocolVerifyConnect` share (enet/protocol.h), in their wire order.
struct ConnectParameters: Sendable, Hashable {
    /// The sender's own id for the peer: the id the receiver must put in the header of what it sends back.
    var outgoingPeerID: UInt16
    /// The session id the sender expects on incoming datagrams (0xFF: let the receiver pick).
    var incomingSessionID: UInt8
    /// The session id the sender will put on outgoing datagrams (0xFF: let the receiver pick).
    var outgoingSessionID: UInt8
    var mtu: UInt32
    var windowSize: UInt32
    var channelCount: UInt32
    var incomingBandwidth: UInt32
    var outgoingBandwidth: UInt32
    var packetThrottleInterval: UInt32
    var packetThrottleAcceleration: UInt32
    var packetThrottleDeceleration: UInt32
    /// Chosen by the connecting side, echoed by the other; also the seed of every later datagram's checksum.
    var connectID: UInt32

    /// The fields' bytes after the command header: 2 + 1 + 1 + 9 × 4.
    static let size = 40
}
