/// The codec for ENet with no message code: a message is an ``ENetPacket`` (channel, delivery, bytes), so any
/// server can be driven with bytes a script or a behaviour chooses. Its protocol is `enet`.
///
/// Decoding copies the bytes into buffers the codec keeps, taken in turn, and hands one out as the packet's `bytes`:
/// once the agent has let go of a packet (it normally reads it and drops it), its buffer is unshared and a later
/// packet is copied into the same storage, so a steady stream of packets costs no allocation — also when one datagram
/// carries several (up to ``buffers``). A packet the agent keeps simply keeps its storage, and the buffer's next
/// packet starts a new one (copy-on-write). A buffer that grew past 8 KiB for a large packet is let go after it, so a
/// connection keeps at most a few small buffers between packets.
public struct ENetRawCodec: ENetMessageCodec {
    /// `enet`.
    public static var protocolName: String { "enet" }

    /// Packets in one call (one datagram's) that can be decoded without an allocation.
    static let buffers = 4
    /// The storage the last decoded packets' bytes share, taken in turn.
    private var scratch: [[UInt8]] = []
    private var next = 0

    /// The codec; it has no options.
    public init() {}

    /// Appends the packet's bytes and returns its route.
    public func encode(_ message: ENetPacket, into payload: inout [UInt8]) -> ENetRoute {
        payload.append(contentsOf: message.bytes)
        return message.route
    }

    /// The bytes as a packet on `route`; never `nil`.
    public mutating func decode(_ payload: UnsafeRawBufferPointer, route: ENetRoute) -> ENetPacket? {
        if scratch.isEmpty { scratch = Array(repeating: [], count: Self.buffers) }
        let index = next
        next = (next + 1) % Self.buffers
        if scratch[index].capacity > 8 * 1024, payload.count <= 8 * 1024 { scratch[index] = [] }
        scratch[index].removeAll(keepingCapacity: true)
        scratch[index].append(contentsOf: payload)
        return ENetPacket(channel: route.channel, delivery: route.delivery, bytes: scratch[index])
    }

    /// Every raw codec is the same codec: the buffer is storage, not an option.
    public static func == (lhs: ENetRawCodec, rhs: ENetRawCodec) -> Bool { true }

    /// Hashes nothing: every raw codec is the same.
    public func hash(into hasher: inout Hasher) {}
}
