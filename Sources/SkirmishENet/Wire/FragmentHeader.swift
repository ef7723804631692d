/// The fields of a fragment command after its header (enet/protocol.h, `ENetProtocolSendFragment`): where this
/// piece sits in the whole packet. `dataLength` is not kept: it is the payload's length.
struct FragmentHeader: Sendable, Hashable {
    /// The reliable sequence number of the first fragment (reliable fragments) or the packet's unreliable sequence
    /// number (unreliable fragments): what ties the pieces of one packet together.
    var startSequenceNumber: UInt16
    var fragmentCount: UInt32
    var fragmentNumber: UInt32
    var totalLength: UInt32
    var fragmentOffset: UInt32

    /// Whether the fields can describe a real packet, as libenet checks them before it copies a byte
    /// (protocol.c, `enet_protocol_handle_send_fragment`); `dataLength` is the payload's length.
    func isPlausible(dataLength: Int) -> Bool {
        fragmentCount > 0 && fragmentCount <= ProtocolLimits.maximumFragmentCount && fragmentNumber < fragmentCount
            && fragmentOffset < totalLength && UInt32(dataLength) <= totalLength - fragmentOffset
            && fragmentCount <= totalLength
    }
}
