/// A packet as ENet itself sees one: a channel, a delivery and bytes. ``ENetRawCodec``'s message.
public struct ENetPacket: Sendable, Hashable {
    /// The channel it travels on.
    public var channel: UInt8
    /// How it is delivered (on arrival: how it came).
    public var delivery: ENetDelivery
    /// Its bytes, exactly as the application at the other end sent or receives them.
    public var bytes: [UInt8]

    /// A packet of `bytes` on `channel` with `delivery`.
    public init(channel: UInt8, delivery: ENetDelivery, bytes: [UInt8]) {
        self.channel = channel
        self.delivery = delivery
        self.bytes = bytes
    }

    /// Its route.
    public var route: ENetRoute { ENetRoute(channel: channel, delivery: delivery) }
}
