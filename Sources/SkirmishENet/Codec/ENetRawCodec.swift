/// The codec for ENet with no message code: a message is an ``ENetPacket`` (channel, delivery, bytes), so any
/// server can be driven with bytes a script or a behaviour chooses. Its protocol is `enet`.
///
/// Decoding copies the bytes into one buffer the codec keeps and hands out as the packet's `bytes`: once the agent
/// has let go of the previous packet (it normally reads it and drops it), the buffer is unshared and the next packet
/// is copied into the same storage, so a steady stream of packets costs no allocation. A packet the agent keeps
/// simply keeps that storage, and the next decode starts a new buffer (copy-on-write); so does every packet but the
/// first of a datagram that carries several.
public struct ENetRawCodec: ENetMessageCodec {
    /// `enet`.
    public static var protocolName: String { "enet" }

    /// The storage the last decoded packet's bytes share.
    private var scratch: [UInt8] = []

    /// The codec; it has no options.
    public init() {}

    /// Appends the packet's bytes and returns its route.
    public func encode(_ message: ENetPacket, into payload: inout [UInt8]) -> ENetRoute {
        payload.append(contentsOf: message.bytes)
        return message.route
    }

    /// The bytes as a packet on `route`; never `nil`.
    public mutating func decode(_ payload: UnsafeRawBufferPointer, route: ENetRoute) -> ENetPacket? {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: payload)
        return ENetPacket(channel: route.channel, delivery: route.delivery, bytes: scratch)
    }

    /// Every raw codec is the same codec: the buffer is storage, not an option.
    public static func == (lhs: ENetRawCodec, rhs: ENetRawCodec) -> Bool { true }

    /// Hashes nothing: every raw codec is the same.
    public func hash(into hasher: inout Hasher) {}
}
