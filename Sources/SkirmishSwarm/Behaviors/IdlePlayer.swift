import SkirmishNet
import SkirmishWire

/// The `idle` behaviour at a Snap or Suns table: takes a seat and keeps its connection alive, and nothing more.
///
/// It never signs in, readies or proposes a layout, so its table waits for it: the load is one held session and a
/// Ping a second each way, which is what "how many connected players can this server hold" needs. (An idle Puck
/// player is a ``PuckPlayer`` standing still: Puck streams snapshots to every seat whatever the player does.)
struct IdlePlayer: Agent {
    typealias Connection = SnapConnection

    private(set) var isMatchOver = false

    var nextWake: Instant? { nil }

    mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {}

    mutating func wake(context: inout AgentContext<SnapConnection>) {}

    mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        switch message {
        case .otherClientQuit, .serverQuit, .snapGameOver: isMatchOver = true
        default: break
        }
    }
}
