/// The command numbers of ENet 1.3 and the fixed size of each command on the wire.
///
/// Values from enet/protocol.h, `ENetProtocolCommand`; sizes are the packed structs of the same header
/// (`ENetProtocolAcknowledge` … `ENetProtocolSendFragment`), as libenet's `commandSizes` table in protocol.c lists them.
/// A command is followed by `dataLength` payload bytes for the send commands, by nothing for the others.
enum CommandNumber: UInt8, CaseIterable, Sendable {
    case acknowledge = 1
    case connect = 2
    case verifyConnect = 3
    case disconnect = 4
    case ping = 5
    case sendReliable = 6
    case sendUnreliable = 7
    case sendFragment = 8
    case sendUnsequenced = 9
    case bandwidthLimit = 10
    case throttleConfigure = 11
    case sendUnreliableFragment = 12

    /// `ENET_PROTOCOL_COMMAND_MASK`: the low four bits of the command byte hold the number.
    static let mask: UInt8 = 0x0F
    /// `ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE`: the receiver must acknowledge the command (it is reliable).
    static let acknowledgeFlag: UInt8 = 1 << 7
    /// `ENET_PROTOCOL_COMMAND_FLAG_UNSEQUENCED`: sent outside every sequence (unsequenced data, a disconnect now).
    static let unsequencedFlag: UInt8 = 1 << 6

    /// Bytes of the command itself, its 4-byte `ENetProtocolCommandHeader` included, payload excluded.
    var size: Int {
        switch self {
        case .acknowledge: 8
        case .connect: 48
        case .verifyConnect: 44
        case .disconnect: 8
        case .ping: 4
        case .sendReliable: 6
        case .sendUnreliable: 8
        case .sendFragment, .sendUnreliableFragment: 24
        case .sendUnsequenced: 8
        case .bandwidthLimit: 12
        case .throttleConfigure: 16
        }
    }
}
