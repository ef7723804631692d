/// Where a message travels: its channel and its delivery.
///
/// A codec returns one for each message it encodes and is given one with each it decodes. A message larger than a
/// datagram is cut into fragments on the way; ENet sends the fragments of an unreliable or unsequenced message
/// reliably unless ``ENetConnection/Configuration/unreliableFragments`` is on, and a message reassembled from reliable
/// fragments arrives as ``ENetDelivery/reliable`` — the route says how it came, as libenet's packet flags do.
public struct ENetRoute: Sendable, Hashable {
    /// The channel, below the connection's channel count (at most 255 channels, 0 to 254).
    public var channel: UInt8
    /// How the message is delivered.
    public var delivery: ENetDelivery

    /// A route on `channel` with `delivery`.
    public init(channel: UInt8, delivery: ENetDelivery) {
        self.channel = channel
        self.delivery = delivery
    }

    /// Reliable on `channel`.
    public static func reliable(_ channel: UInt8) -> ENetRoute { ENetRoute(channel: channel, delivery: .reliable) }

    /// Unreliable, sequenced on `channel`.
    public static func unreliable(_ channel: UInt8) -> ENetRoute { ENetRoute(channel: channel, delivery: .unreliable) }

    /// Unsequenced on `channel`.
    public static func unsequenced(_ channel: UInt8) -> ENetRoute {
        ENetRoute(channel: channel, delivery: .unsequenced)
    }
}
