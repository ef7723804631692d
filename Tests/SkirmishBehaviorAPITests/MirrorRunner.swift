import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// Starts one mirror outside a script, on the runtime a swarm uses: it joins any Puck table at `target` and plays
/// one match, 80 px up from its goal line, until the match ends or `runner.stop(_:)` ends it.
func startMirror(on runner: AgentRunner, target: Target, tally: MirrorTally) async throws -> AgentRunner.Player {
    var persona = Persona(name: "mirror", game: .puck, behavior: BehaviorName(rawValue: "mirror"), inputRate: 30)
    // No script decodes its options here: the program sets them itself.
    persona.options = OptionValue(MirrorOptions(depth: 80))
    return try await runner.start(AgentRunner.Configuration(target: target, persona: persona)) { context in
        MirrorPlayer(context: &context, tally: tally)
    }
}
