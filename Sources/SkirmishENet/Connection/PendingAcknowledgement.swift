/// An acknowledgement to send: which reliable command arrived, and the sent time of the datagram that carried it
/// (libenet's `ENetAcknowledgement`).
struct PendingAcknowledgement: Sendable, Hashable {
    var channelID: UInt8
    var reliableSequenceNumber: UInt16
    var sentTime: UInt16
    /// Whether it acknowledges a disconnect: once it is sent, the connection is over.
    var acknowledgesDisconnect: Bool
}
