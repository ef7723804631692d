/// A game's messages on ENet: how each becomes packet bytes on a channel, and how packet bytes become one again.
///
/// This is all a team writes to load-test its ENet server with its own messages: ENet itself (the handshake,
/// reliability, fragments, acknowledgements, pings, throttling) is ``ENetConnection``'s job, and a protocol is
/// "ENet + my messages". The codec is a value inside the connection's configuration, so it carries its own options
/// (a protocol version, a compression switch) and may keep state between messages (a delta baseline).
///
/// Both directions are on the hot path and allocate nothing: ``encode(_:into:)`` appends to a buffer the connection
/// owns and reuses (emptied before each call, its capacity kept), and ``decode(_:route:)`` reads borrowed bytes that
/// are valid only during the call. ``ENetRawCodec`` is the codec for no code at all: its message is the route and the
/// bytes.
public protocol ENetMessageCodec: Sendable, Hashable {
    /// What agents send and receive.
    associatedtype Message

    /// The name scripts give the protocol in `protocol:` (lowercase, like `enet` or `arena`), and the name a
    /// catalogue registers it under: each codec is a protocol of its own, with its own behaviours.
    ///
    /// It belongs to the codec's type because the runtime knows a protocol by its connection type
    /// (``SkirmishNet/ProtocolDescription/name``): ``ENetRawCodec`` is `enet`, and a codec that reused that name would
    /// replace it in the catalogue it is registered in.
    static var protocolName: String { get }

    /// Appends `message`'s packet bytes to `payload` (empty on entry) and says where the packet goes.
    mutating func encode(_ message: Message, into payload: inout [UInt8]) -> ENetRoute

    /// The message in `payload`, which arrived as `route` says; `nil` when the bytes are not a message (the
    /// connection counts it as `undecodable_message` and drops it — a server's bytes are never trusted).
    mutating func decode(_ payload: UnsafeRawBufferPointer, route: ENetRoute) -> Message?
}
