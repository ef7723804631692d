import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

extension Catalogue {
    /// Adds `ddnet` — the Teeworlds 0.6 protocol with DDNet's extensions, as DDNet 16.4 servers speak it — with its
    /// script options, its chat and its behaviours `runner`, `idle` and `chatter`.
    ///
    /// A script then says `protocol: ddnet` (or `protocol: {name: ddnet, password: …}`) and runs against any DDNet
    /// server given with `--target udp://HOST:8303`. The protocol block and each persona take `player_name` (a pattern
    /// with `{n}`, the bot's number), `clan`, `skin`, `country` and `password`; the block also takes
    /// `handshake_timeout`, `silence_timeout` and `ping_interval`. A persona that names no behaviour is a `runner`;
    /// `chatter` takes `chat_every` and `echo_timeout`. The `skirmish` command's catalogue has it registered.
    public mutating func registerDDNet() {
        register(
            protocol: DDNetConnection.self,
            configurationKeys: DDNetOptions.playerKeys + ["handshake_timeout", "silence_timeout", "ping_interval"],
            configuration: { (options: inout ScriptOptions) throws(ScriptError) -> DDNetConnection.Configuration in
                var configuration = DDNetConnection.Configuration()
                try DDNetOptions.decodePlayer(&options, into: &configuration)
                if let timeout = try options.duration("handshake_timeout", positive: true) {
                    configuration.handshakeTimeout = timeout
                }
                if let timeout = try options.duration("silence_timeout", positive: true) {
                    configuration.silenceTimeout = timeout
                }
                if let interval = try options.duration("ping_interval", positive: true) {
                    configuration.pingInterval = interval
                }
                return configuration
            },
            personaKeys: DDNetOptions.playerKeys,
            persona: {
                (
                    options: inout ScriptOptions, base: DDNetConnection.Configuration,
                    _: ScriptVocabulary.PersonaContext
                ) throws(ScriptError) -> PersonaSettings<DDNetConnection> in
                var configuration = base
                try DDNetOptions.decodePlayer(&options, into: &configuration)
                return PersonaSettings(
                    configuration: configuration, gameName: DDNetConnection.description.name,
                    defaultBehavior: "runner", defaultInputRate: Double(Wire.tickRate))
            },
            chat: ChatSupport(problem: DDNetOptions.chatProblem, message: { .say($0) }))

        register(behavior: "idle") { (_: inout AgentContext<DDNetConnection>) in Idler() }
        register(behavior: "runner") { (context: inout AgentContext<DDNetConnection>) in
            Runner(inputRate: context.persona.inputRate)
        }
        register(
            behavior: "chatter", keys: ["chat_every", "echo_timeout"],
            series: { _ in BehaviorSeries(checks: [EchoChatter.check]) },
            options: { (options: inout ScriptOptions, _: DDNetConnection.Configuration) throws(ScriptError) in
                OptionValue(try DDNetOptions.decodeChatter(&options))
            },
            make: { (context: inout AgentContext<DDNetConnection>) in
                EchoChatter(options: context.persona.options.get(EchoChatter.Options.self) ?? EchoChatter.Options())
            })
    }
}
