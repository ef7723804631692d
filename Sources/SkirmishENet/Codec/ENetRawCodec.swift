/// The codec for ENet with no message code: a message is an ``ENetPacket`` (channel, delivery, bytes), so any
/// server can be driven with bytes a script or a behaviour chooses.
///
/// Decoding copies the bytes into the packet (an array per message: the price of having no message type); a codec of
/// the game's own messages decodes its fields straight from the borrowed bytes instead.
public struct ENetRawCodec: ENetMessageCodec {
    /// The codec; it has no options.
    public init() {}

    /// Appends the packet's bytes and returns its route.
    public func encode(_ message: ENetPacket, into payload: inout [UInt8]) -> ENetRoute {
        payload.append(contentsOf: message.bytes)
        return message.route
    }

    /// The bytes as a packet on `route`; never `nil`.
    public func decode(_ payload: UnsafeRawBufferPointer, route: ENetRoute) -> ENetPacket? {
        ENetPacket(channel: route.channel, delivery: route.delivery, bytes: Array(payload))
    }
}
