/// An incoming packet the connection keeps until it may be delivered: a reliable one that came before a gap filled,
/// an unreliable one waiting for the reliable packet sent before it, or a packet still being reassembled from its
/// fragments (libenet's `ENetIncomingCommand`).
struct HeldPacket: Sendable, Hashable {
    /// Its reliable sequence number (a fragmented packet's: its first fragment's).
    var reliableSequenceNumber: UInt16
    /// Its unreliable sequence number (0 for reliable packets).
    var unreliableSequenceNumber: UInt16
    /// How it travels: reliable or unreliable (held packets are never unsequenced).
    var delivery: ENetDelivery
    /// The pool slot with its bytes (the whole packet, being filled while fragments arrive).
    var slot: Int
    /// The pool slot with its fragment bitmap, or -1 when it is not fragmented.
    var bitmapSlot = -1
    /// Its fragment count; 0 when it came whole.
    var fragmentCount: UInt32 = 0
    var fragmentsRemaining: UInt32 = 0
    /// Bytes its commands took on the wire, for the metrics.
    var wireBytes: Int
    /// Bytes it counts against the connection's incoming limit.
    var footprint: Int

    /// Whether every fragment is in.
    var isComplete: Bool { fragmentsRemaining == 0 }
}
