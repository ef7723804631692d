/// How ENet carries a message on its channel: the three ways `enet_peer_send` has (enet/enet.h, `ENetPacketFlag`).
public enum ENetDelivery: String, Sendable, Hashable, CaseIterable {
    /// Resent until acknowledged, delivered once and in order with the channel's other reliable messages
    /// (`ENET_PACKET_FLAG_RELIABLE`).
    case reliable
    /// Sent once; delivered in order or not at all: one older than what the channel already delivered is dropped,
    /// and it waits for the reliable message sent before it on the channel (no flag).
    case unreliable
    /// Sent once and delivered as it comes, duplicates dropped, no order (`ENET_PACKET_FLAG_UNSEQUENCED`).
    case unsequenced
}
