/// One channel's sequence numbers, both ways, and the incoming packets it holds (libenet's `ENetChannel`).
struct ChannelState: Sendable {
    var outgoingReliableSequenceNumber: UInt16 = 0
    var outgoingUnreliableSequenceNumber: UInt16 = 0
    /// The last reliable sequence number delivered.
    var incomingReliableSequenceNumber: UInt16 = 0
    /// The last unreliable sequence number delivered since that reliable one.
    var incomingUnreliableSequenceNumber: UInt16 = 0
    /// Reliable commands sent and not yet acknowledged: kept below one reliable window, which is what keeps this
    /// side inside the window a libenet receiver takes (the role of libenet's `usedReliableWindows`).
    var reliableInFlight = 0
    /// Reliable packets ahead of the next one expected, ordered by distance from it.
    var heldReliable: [HeldPacket] = []
    /// Unreliable packets waiting for their reliable predecessor or their last fragments, ordered by
    /// (reliable distance, unreliable number).
    var heldUnreliable: [HeldPacket] = []

    /// How far `sequence` is ahead of the last reliable number delivered, modulo 2¹⁶.
    func distance(_ sequence: UInt16) -> UInt16 { sequence &- incomingReliableSequenceNumber }

    /// Whether a receiver takes reliable sequence number `sequence` now: its window is the current one or one of
    /// the next `ENET_PEER_FREE_RELIABLE_WINDOWS - 2` (peer.c, `enet_peer_queue_incoming_command`).
    func acceptsWindow(of sequence: UInt16) -> Bool {
        let size = ProtocolLimits.reliableWindowSize
        var window = sequence / size
        let current = incomingReliableSequenceNumber / size
        if sequence < incomingReliableSequenceNumber { window += ProtocolLimits.reliableWindows }
        return window >= current && window < current + ProtocolLimits.freeReliableWindows - 1
    }

    /// Whether libenet would refuse to acknowledge `sequence`: its window lies just past the ones it takes
    /// (peer.c, `enet_peer_queue_acknowledgement`).
    func refusesAcknowledgement(of sequence: UInt16) -> Bool {
        let size = ProtocolLimits.reliableWindowSize
        var window = sequence / size
        let current = incomingReliableSequenceNumber / size
        if sequence < incomingReliableSequenceNumber { window += ProtocolLimits.reliableWindows }
        return window >= current + ProtocolLimits.freeReliableWindows - 1
            && window <= current + ProtocolLimits.freeReliableWindows
    }
}
