/// One ENet command's fields after its header, decoded; the payload of a send command is carried beside it (as a
/// range of the datagram when decoding, as bytes when encoding), never inside.
enum Command: Sendable, Hashable {
    /// `ENetProtocolAcknowledge`: the reliable command with this sequence number (on the header's channel) arrived;
    /// `receivedSentTime` echoes the low 16 bits of the sent time of the datagram that carried it.
    case acknowledge(receivedReliableSequenceNumber: UInt16, receivedSentTime: UInt16)
    /// `ENetProtocolConnect`, with the application's 32-bit connect data.
    case connect(ConnectParameters, data: UInt32)
    /// `ENetProtocolVerifyConnect`.
    case verifyConnect(ConnectParameters)
    /// `ENetProtocolDisconnect`, with the application's 32-bit data.
    case disconnect(data: UInt32)
    /// `ENetProtocolPing`: nothing but a reliable command to acknowledge.
    case ping
    /// `ENetProtocolSendReliable`.
    case sendReliable
    /// `ENetProtocolSendUnreliable`.
    case sendUnreliable(unreliableSequenceNumber: UInt16)
    /// `ENetProtocolSendUnsequenced`.
    case sendUnsequenced(unsequencedGroup: UInt16)
    /// `ENetProtocolSendFragment` with `ENET_PROTOCOL_COMMAND_SEND_FRAGMENT`: a piece of a reliable packet.
    case sendFragment(FragmentHeader)
    /// `ENetProtocolBandwidthLimit`: the sender's bandwidths, bytes per second (0: unlimited).
    case bandwidthLimit(incoming: UInt32, outgoing: UInt32)
    /// `ENetProtocolThrottleConfigure`.
    case throttleConfigure(interval: UInt32, acceleration: UInt32, deceleration: UInt32)
    /// `ENetProtocolSendFragment` with `ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE_FRAGMENT`.
    case sendUnreliableFragment(FragmentHeader)

    /// The command's number.
    var number: CommandNumber {
        switch self {
        case .acknowledge: .acknowledge
        case .connect: .connect
        case .verifyConnect: .verifyConnect
        case .disconnect: .disconnect
        case .ping: .ping
        case .sendReliable: .sendReliable
        case .sendUnreliable: .sendUnreliable
        case .sendUnsequenced: .sendUnsequenced
        case .sendFragment: .sendFragment
        case .bandwidthLimit: .bandwidthLimit
        case .throttleConfigure: .throttleConfigure
        case .sendUnreliableFragment: .sendUnreliableFragment
        }
    }

    /// Whether a `dataLength` field and payload bytes follow the fixed part.
    var carriesPayload: Bool {
        switch self {
        case .sendReliable, .sendUnreliable, .sendUnsequenced, .sendFragment, .sendUnreliableFragment: true
        case .acknowledge, .connect, .verifyConnect, .disconnect, .ping, .bandwidthLimit, .throttleConfigure: false
        }
    }
}
