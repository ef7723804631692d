/// The four bytes every command starts with (enet/protocol.h, `ENetProtocolCommandHeader`): the command byte (number
/// and flags), the channel and the reliable sequence number, big-endian.
struct CommandHeader: Sendable, Hashable {
    /// What the command is.
    var number: CommandNumber
    /// `ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE`: the command is reliable and must be acknowledged.
    var acknowledge: Bool
    /// `ENET_PROTOCOL_COMMAND_FLAG_UNSEQUENCED`.
    var unsequenced: Bool
    /// The channel, or ``ProtocolLimits/controlChannel`` for commands of the connection itself.
    var channelID: UInt8
    /// The reliable sequence number: the command's own for a reliable one, the channel's latest for an unreliable one.
    var reliableSequenceNumber: UInt16

    /// A header; both flags default to off.
    init(
        _ number: CommandNumber, channelID: UInt8, reliableSequenceNumber: UInt16 = 0, acknowledge: Bool = false,
        unsequenced: Bool = false
    ) {
        self.number = number
        self.channelID = channelID
        self.reliableSequenceNumber = reliableSequenceNumber
        self.acknowledge = acknowledge
        self.unsequenced = unsequenced
    }

    /// The command byte: the number in the low nibble, the flags in bits 7 and 6.
    var commandByte: UInt8 {
        number.rawValue | (acknowledge ? CommandNumber.acknowledgeFlag : 0)
            | (unsequenced ? CommandNumber.unsequencedFlag : 0)
    }
}
