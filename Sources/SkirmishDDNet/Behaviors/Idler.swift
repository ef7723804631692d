import SkirmishNet
import SkirmishSwarm
import SkirmishWire

/// The `idle` behaviour: a player in the game who never touches the controls.
///
/// It needs no wake-ups at all: the connection already sends the held input — neutral, since this agent never sends
/// another — every server tick with the acknowledged snapshot, as a real client left alone does. So an idle bot costs
/// the server one player slot, a snapshot every other tick and an input every tick: what "how many connected players
/// can this server hold" needs. It plays until its persona's step ends (DDNet has no matches).
struct Idler: Agent {
    typealias Connection = DDNetConnection

    var nextWake: Instant? { nil }

    var isMatchOver: Bool { false }

    mutating func established(_ session: DDNetConnection.Session, context: inout AgentContext<DDNetConnection>) {}

    mutating func received(_ message: DDNetConnection.Message, context: inout AgentContext<DDNetConnection>) {}

    mutating func wake(context: inout AgentContext<DDNetConnection>) {}
}
