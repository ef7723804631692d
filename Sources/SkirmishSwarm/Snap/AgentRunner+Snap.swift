import SkirmishNet
import SkirmishScript
import SkirmishWire

extension AgentRunner.Configuration where Connection == SnapConnection {
    /// A SNAP player for `persona` against `target`: the persona's game and seats, any match, a ping every second.
    public init(target: Target, persona: Persona) {
        self.init(
            target: target, persona: persona,
            connection: persona.connection.get(SnapConnection.Configuration.self)
                ?? SnapConnection.Configuration(game: .puck))
    }

    /// The match to join (0: any).
    public var match: UInt32 {
        get { connection.match }
        set { connection.match = newValue }
    }

    /// How often the connection pings (the agent hears the round trip through its context).
    public var pingInterval: Duration {
        get { connection.pingInterval ?? .seconds(1) }
        set { connection.pingInterval = newValue }
    }
}
