/// Which unsequenced groups arrived lately, to drop duplicates: libenet's `unsequencedWindow` bitmap with its base
/// `incomingUnsequencedGroup` (protocol.c, `enet_protocol_handle_send_unsequenced`).
struct UnsequencedWindow: Sendable, Hashable {
    /// The first group the bitmap covers.
    private(set) var base: UInt16 = 0
    private var bits = [UInt32](repeating: 0, count: Int(ProtocolLimits.unsequencedWindowSize / 32))

    /// Whether group `group` is new; if so it is marked. Groups too far ahead of the window are refused, as
    /// libenet refuses them.
    mutating func accept(_ group: UInt16) -> Bool {
        let size = ProtocolLimits.unsequencedWindowSize
        let index = UInt32(group) % size
        var extended = UInt32(group)
        if group < base { extended += 0x10000 }
        guard extended < UInt32(base) + ProtocolLimits.freeUnsequencedWindows * size else { return false }
        let start = UInt16(truncatingIfNeeded: extended - index)
        if start != base {
            base = start
            for word in bits.indices { bits[word] = 0 }
        } else if bits[Int(index / 32)] & (1 << (index % 32)) != 0 {
            return false
        }
        bits[Int(index / 32)] |= 1 << (index % 32)
        return true
    }
}
