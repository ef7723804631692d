import SkirmishSwarm
import SkirmishWire

/// The `idle` behaviour of every ENet protocol: connect and hold the connection, sending nothing of its own.
///
/// ENet keeps the line alive itself (a ping after `ping_interval` without an acknowledgement), so an idle bot is what
/// a server that must hold many quiet players sees; and a server's own traffic (a state broadcast) still reaches it
/// and is counted.
struct IdleAgent<Codec: ENetMessageCodec>: Agent {
    typealias Connection = ENetConnection<Codec>

    var nextWake: Instant? { nil }
    var isMatchOver: Bool { false }

    func established(_ session: ENetSession, context: inout AgentContext<Connection>) {}
    func received(_ message: Codec.Message, context: inout AgentContext<Connection>) {}
    func wake(context: inout AgentContext<Connection>) {}
}
