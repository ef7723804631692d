/// A command on its way out, then (when reliable) waiting for its acknowledgement: libenet's `ENetOutgoingCommand`.
///
/// Its payload, if any, is `fragmentLength` bytes at `fragmentOffset` of a ``PayloadPool`` slot shared by every
/// fragment of the same packet.
struct OutgoingCommand: Sendable {
    var header: CommandHeader
    var command: Command
    /// The payload's pool slot, or -1.
    var slot = -1
    var fragmentOffset = 0
    var fragmentLength = 0
    /// The unreliable sequence number, kept to drop a throttled packet's fragments together.
    var unreliableSequenceNumber: UInt16 = 0
    var sendAttempts = 0
    /// When it was last sent, ENet milliseconds.
    var sentTime: UInt32 = 0
    /// The resend timeout, doubled at each resend; 0 until first sent.
    var roundTripTimeout: UInt32 = 0
    /// The timeout beyond which, with `timeoutMinimum` passed, the peer is given up.
    var roundTripTimeoutLimit: UInt32 = 0
    /// Its index in the description's packet kinds.
    var kind: Int
    /// Bytes to count for its packet when first sent (all its commands, payload included); 0 on every fragment but
    /// the first, so a packet is counted once.
    var reportBytes = 0

    /// Whether the command is reliable.
    var isReliable: Bool { header.acknowledge }

    /// What a queued command costs beyond its payload, against the queue's bound: so that empty messages count too.
    static let overhead = 32

    /// What the command counts against the queue's bound while it is queued or unacknowledged.
    var queuedFootprint: Int { fragmentLength + Self.overhead }
}
