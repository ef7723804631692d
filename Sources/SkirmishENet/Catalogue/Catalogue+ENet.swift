import SkirmishNet
import SkirmishScript
import SkirmishSwarm

extension Catalogue {
    /// Adds ENet with no code as the protocol `enet`: messages are bytes on a channel with a delivery
    /// (``ENetRawCodec``), and its behaviours are `payload` (messages laid out by the script, replies matched and
    /// timed) and `idle` (hold the connection).
    ///
    /// ```yaml
    /// protocol: {name: enet, channels: 2}
    /// personas:
    ///   - name: echo
    ///     behavior: payload
    ///     payload: {channel: 1, delivery: reliable, rate: 20hz, template: [{bytes: "0a0b"}, {sequence: u32}]}
    /// ```
    public mutating func registerENet() {
        registerENet(codec: ENetRawCodec())
        register(
            behavior: "payload", keys: PayloadOptions.keys,
            series: { _ in
                BehaviorSeries(figures: [.requestRoundTrip], checks: ["echo_matched", "echo_in_order"])
            },
            options: {
                (options: inout ScriptOptions, configuration: ENetConnection<ENetRawCodec>.Configuration)
                    throws(ScriptError) -> OptionValue in
                OptionValue(try PayloadOptions.read(&options, configuration: configuration))
            },
            make: { context in PayloadAgent(context: &context) })
    }

    /// This catalogue with ENet added as ``registerENet()`` adds it: `Catalogue.builtIn.registeringENet()`.
    public func registeringENet() -> Catalogue {
        var catalogue = self
        catalogue.registerENet()
        return catalogue
    }

    /// Adds "ENet + my messages": the protocol ``ENetMessageCodec/protocolName`` of `codec`'s type, whose
    /// connections are ``ENetConnection``s with `codec`, and its behaviour `idle`; register your own behaviours for
    /// it with ``Catalogue/register(behavior:games:keys:isLegit:series:options:make:)``.
    ///
    /// A script's `protocol:` block sets ENet's options (``ENetConnection/Configuration/read(_:)``: channels,
    /// bandwidths, MTU, checksum, connect data, timeouts, ping interval, throttle) and, through `codecOptions`,
    /// the codec's own (`codecKeys`) over `codec`; both are checked as strictly as the rest of a script.
    ///
    /// ```swift
    /// var catalogue = Catalogue.builtIn
    /// catalogue.registerENet(codec: ArenaCodec())
    /// catalogue.register(behavior: "mover") { context in Mover(context: &context) }
    /// let script = try catalogue.scriptLoader.load(path: "bots/arena.yaml")  // protocol: arena, behavior: mover
    /// ```
    public mutating func registerENet<Codec: ENetMessageCodec>(
        codec: Codec, codecKeys: [String] = [],
        codecOptions: @escaping @Sendable (inout ScriptOptions, inout Codec) throws(ScriptError) -> Void = { _, _ in }
    ) {
        register(
            protocol: ENetConnection<Codec>.self,
            configurationKeys: ENetConnection<Codec>.Configuration.scriptKeys + codecKeys,
            configuration: {
                (options: inout ScriptOptions) throws(ScriptError) -> ENetConnection<Codec>.Configuration in
                var configuration = ENetConnection<Codec>.Configuration(codec: codec)
                try configuration.read(&options)
                try codecOptions(&options, &configuration.codec)
                return configuration
            },
            persona: {
                (_: inout ScriptOptions, configuration: ENetConnection<Codec>.Configuration, _) throws(ScriptError)
                    -> PersonaSettings<ENetConnection<Codec>> in
                PersonaSettings(configuration: configuration, gameName: Codec.protocolName, defaultInputRate: 10)
            })
        register(behavior: "idle") { (_: inout AgentContext<ENetConnection<Codec>>) in IdleAgent<Codec>() }
    }
}
