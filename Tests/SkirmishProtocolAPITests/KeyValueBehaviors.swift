import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

// The "Testing your own server" article's protocol, step 3: behaviours, and one catalogue for scripts and swarms.

/// A key-value client: a writer puts, a reader gets, a random key of its persona's key space at its input rate.
struct KeyValueClient: Agent {
    typealias Connection = KeyValueConnection

    /// The behaviours' own script option: `keys:`, how many keys they spread over.
    struct Options: Sendable, Hashable {
        var keys: UInt16 = 100

        /// Reads a persona's `keys:` (1–65,535; 100 when absent) from the script.
        @Sendable static func decode(
            _ options: inout ScriptOptions, _: KeyValueConnection.Configuration
        ) throws(ScriptError) -> OptionValue {
            OptionValue(Options(keys: UInt16(try options.integer("keys", in: 1...65_535) ?? 100)))
        }
    }

    let writes: Bool
    let keys: UInt16
    /// Nanoseconds between requests.
    let period: Int64
    private var next: Instant?
    /// The values of the latest puts: each reply must carry one of them back (an emulated link may reorder replies).
    private var recentPuts: [UInt32] = []

    init(writes: Bool, context: inout AgentContext<KeyValueConnection>) {
        self.writes = writes
        keys = context.persona.options.get(Options.self)?.keys ?? 100
        period = Int64(1e9 / context.persona.inputRate)
    }

    var nextWake: Instant? { next }
    var isMatchOver: Bool { false }

    mutating func established(_ session: UInt32, context: inout AgentContext<KeyValueConnection>) {
        next = context.now
    }

    mutating func wake(context: inout AgentContext<KeyValueConnection>) {
        guard let due = next else { return }
        let key = UInt16.random(in: 0..<keys, using: &context.random)
        if writes {
            let value = UInt32.random(in: 0...UInt32.max, using: &context.random)
            if recentPuts.count == 16 { recentPuts.removeFirst() }
            recentPuts.append(value)
            context.send(.put(key: key, value: value))
        } else {
            context.send(.get(key: key))
        }
        // On a schedule fixed when the session opened; requests a late loop missed are skipped, not bunched.
        let missed = max(0, context.now.nanoseconds(since: due)) / period
        next = due.advanced(byNanoseconds: period * (missed + 1))
    }

    mutating func received(_ message: KeyValueConnection.Message, context: inout AgentContext<KeyValueConnection>) {
        guard case .value(_, let value) = message, writes else { return }
        context.check("put_echoed", passed: recentPuts.contains(value))
    }
}

extension Catalogue {
    /// The key-value protocol and its two behaviours, as a team would register its own server's.
    static func keyValue() -> Catalogue {
        var catalogue = Catalogue()
        catalogue.register(
            protocol: KeyValueConnection.self, configurationKeys: ["handshake_timeout", "silence_timeout"],
            configuration: { (options: inout ScriptOptions) throws(ScriptError) -> KeyValueConnection.Configuration in
                var configuration = KeyValueConnection.Configuration()
                if let timeout = try options.duration("handshake_timeout", positive: true) {
                    configuration.handshakeTimeout = timeout
                }
                if let timeout = try options.duration("silence_timeout", positive: true) {
                    configuration.silenceTimeout = timeout
                }
                return configuration
            })
        catalogue.defaultProtocol = "keyval"
        catalogue.register(
            behavior: "writer", keys: ["keys"], series: { _ in BehaviorSeries(checks: ["put_echoed"]) },
            options: KeyValueClient.Options.decode, make: { context in KeyValueClient(writes: true, context: &context) }
        )
        catalogue.register(behavior: "reader", keys: ["keys"], options: KeyValueClient.Options.decode) { context in
            KeyValueClient(writes: false, context: &context)
        }
        return catalogue
    }
}
