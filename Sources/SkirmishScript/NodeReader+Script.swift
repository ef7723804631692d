import SkirmishWire
import Yams

extension NodeReader {
    static let scriptKeys = ["name", "description", "protocol", "profile", "personas", "scenarios", "thresholds"]
    static let scenarioKeys = ["name", "start", "profile", "personas", "tags"]
    /// The most scenarios one script may hold.
    static let maxScenarios = 16
    static let thresholdKeys = ["limit", "window", "abort_on_fail", "delay_abort_eval"]
    /// The runtime's own persona keys; the rest belong to the protocol and the behaviour.
    static let personaKeys = [
        "name", "weight", "behavior", "input_rate", "link", "transport", "target", "steps", "tags",
    ]
    /// Label names a tag may not take: the series' own labels, and Prometheus's.
    static let reservedLabels: Set<String> = [
        "run", "shard", "game", "persona", "protocol", "type", "kind", "direction", "outcome", "timing", "event",
        "part", "check", "delivery", "reason", "le", "quantile", "job", "instance", "name", "scenario",
    ]
    /// The most tags one persona may carry.
    static let maxTags = 8

    mutating func script(_ root: Node) throws(ScriptError) -> Script {
        var fields = try fields(root, "the script", depth: 0)
        guard let nameNode = fields.take("name") else {
            throw error(root, "the script has no `name`", hint: "add `name: my-test` (it labels every metric)")
        }
        let name = try label(nameNode, "name")
        let summary =
            try fields.take("description").map { (node) throws(ScriptError) in try string(node, "description") } ?? ""
        let (protocolName, protocolEntry, protocolOptions) = try protocolBlock(fields.take("protocol"), root: root)
        var profile: [Stage] = []
        var personas: [Persona] = []
        var scenarios: [Scenario] = []
        if let scenariosNode = fields.take("scenarios") {
            // Several scenarios at once: each has its own personas and profile, so the single form's keys would be
            // ambiguous beside them.
            for key in ["profile", "personas"] {
                if let node = fields.take(key) {
                    throw error(
                        node, "`\(key)` beside `scenarios`",
                        hint: "a script with scenarios gives each scenario its own `profile` and `personas`")
                }
            }
            let items = try sequence(scenariosNode, "scenarios", depth: 1, limit: Self.maxScenarios)
            guard !items.isEmpty else {
                throw error(scenariosNode, "`scenarios` is empty", hint: "add at least one scenario")
            }
            for item in items {
                let scenario = try self.scenario(
                    item, personas: &personas, entry: protocolEntry, configuration: protocolOptions)
                if scenarios.contains(where: { $0.name == scenario.name }) {
                    throw error(
                        item, "two scenarios are named `\(scenario.name)`", hint: "scenario names must be unique")
                }
                scenarios.append(scenario)
            }
        } else {
            if let node = fields.take("profile") { profile = try self.profile(node, depth: 1) }
            guard let personasNode = fields.take("personas") else {
                throw error(
                    root, "the script has no `personas`",
                    hint: "add at least one, e.g. `personas: [{name: chaser, game: puck}]`, or `scenarios`")
            }
            try self.personas(
                personasNode, into: &personas, depth: 1, entry: protocolEntry, configuration: protocolOptions)
        }
        var thresholds: [Threshold] = []
        if let node = fields.take("thresholds") {
            var entries = try self.fields(node, "thresholds", depth: 1)
            for entry in entries.entries {
                _ = entries.take(entry.key)
                // One condition, or a list of them on the same figure (`rtt_p99: ["< 50ms", {limit: …, window: 1m}]`).
                if case .sequence = entry.value {
                    for item in try sequence(entry.value, "threshold `\(entry.key)`", depth: 2, limit: 8) {
                        thresholds.append(
                            try threshold(
                                entry.key, keyNode: entry.keyNode, value: item, personas: personas,
                                protocolName: protocolName))
                    }
                } else {
                    thresholds.append(
                        try threshold(
                            entry.key, keyNode: entry.keyNode, value: entry.value, personas: personas,
                            protocolName: protocolName))
                }
            }
        }
        try fields.finish(self, known: Self.scriptKeys)
        var script = Script(
            name: name, summary: summary, profile: profile, personas: personas, thresholds: thresholds,
            protocolName: protocolName, protocolOptions: protocolOptions)
        script.scenarios = scenarios
        return script
    }

    /// A profile's stages.
    mutating func profile(_ node: Node, depth: Int) throws(ScriptError) -> [Stage] {
        var profile: [Stage] = []
        for item in try sequence(node, "profile", depth: depth, limit: ScriptLoader.maxStages) {
            profile.append(try stage(item))
        }
        return profile
    }

    /// The personas of a `personas` list, appended to `personas` (names unique across the whole script); `tags`
    /// are added to each persona's own (a scenario's).
    mutating func personas(
        _ node: Node, into personas: inout [Persona], depth: Int, entry: ScriptVocabulary.ProtocolEntry,
        configuration: OptionValue,
        tags: [String: String] = [:]
    ) throws(ScriptError) {
        let items = try sequence(node, "personas", depth: depth, limit: ScriptLoader.maxPersonas)
        guard !items.isEmpty else { throw error(node, "`personas` is empty", hint: "add at least one persona") }
        for item in items {
            var persona = try self.persona(item, entry: entry, configuration: configuration)
            if personas.contains(where: { $0.name == persona.name }) {
                throw error(item, "two personas are named `\(persona.name)`", hint: "persona names must be unique")
            }
            persona.tags.merge(tags) { own, _ in own }
            guard persona.tags.count <= Self.maxTags + 1 else {
                throw error(
                    item,
                    "persona `\(persona.name)` has \(persona.tags.count - 1) tags with its scenario's, above the "
                        + "limit of \(Self.maxTags)",
                    hint: "each tag is a label on every series: keep the few you filter or group by")
            }
            guard personas.count < ScriptLoader.maxPersonas else {
                throw error(item, "the script has more than \(ScriptLoader.maxPersonas) personas")
            }
            personas.append(persona)
        }
    }

    /// One scenario: its personas are appended to `personas`, and it keeps their positions.
    mutating func scenario(
        _ node: Node, personas: inout [Persona], entry: ScriptVocabulary.ProtocolEntry, configuration: OptionValue
    ) throws(ScriptError) -> Scenario {
        var f = try fields(node, "a scenario", depth: 2)
        guard let nameNode = f.take("name") else {
            throw error(node, "a scenario has no `name`", hint: "add `name: ladder` (it labels its bots' series)")
        }
        let name = try label(nameNode, "scenario name")
        let start = try f.take("start").map { (node) throws(ScriptError) in try duration(node, "start") } ?? .zero
        guard let profileNode = f.take("profile") else {
            throw error(
                node, "scenario `\(name)` has no `profile`",
                hint: "give it its load model, e.g. `profile: [{ramp: {to: 20, over: 10s}}, {hold: {for: 1m}}]`")
        }
        let profile = try self.profile(profileNode, depth: 3)
        guard profile.contains(where: { $0.length > .zero }) else {
            throw error(
                profileNode, "scenario `\(name)`'s profile lasts no time at all", hint: "give it a `hold` stage")
        }
        var tags =
            try f.take("tags").map { (node) throws(ScriptError) in try self.tags(node, owner: "scenario `\(name)`") }
            ?? [:]
        tags["scenario"] = name
        guard let personasNode = f.take("personas") else {
            throw error(node, "scenario `\(name)` has no `personas`", hint: "add at least one persona")
        }
        let first = personas.count
        try self.personas(
            personasNode, into: &personas, depth: 3, entry: entry, configuration: configuration, tags: tags)
        try f.finish(self, known: Self.scenarioKeys)
        tags.removeValue(forKey: "scenario")
        return Scenario(name: name, start: start, profile: profile, personas: first..<personas.count, tags: tags)
    }

    /// A `tags` mapping of `owner` (a persona, a scenario): label names that are not taken, at most ``maxTags``.
    mutating func tags(_ node: Node, owner: String) throws(ScriptError) -> [String: String] {
        var tags: [String: String] = [:]
        let t = try fields(node, "tags", depth: 3)
        guard t.entries.count <= Self.maxTags else {
            throw error(
                node, "\(owner) has \(t.entries.count) tags, above the limit of \(Self.maxTags)",
                hint: "each tag is a label on every series: keep the few you filter or group by")
        }
        for entry in t.entries {
            let key = entry.key
            let isName = key.utf8.count <= 32 && Interpolation.isName(key.unicodeScalars) && !key.hasPrefix("__")
            guard isName else {
                throw error(
                    entry.keyNode, "tag `\(key)` is not a label name",
                    hint: "letters, digits and _ (not starting with a digit or __), at most 32 characters")
            }
            guard !Self.reservedLabels.contains(key) else {
                throw error(
                    entry.keyNode, "tag `\(key)` would replace a label the series already carry",
                    hint: "choose another name; taken: \(Self.reservedLabels.sorted().joined(separator: ", "))")
            }
            tags[key] = try label(entry.value, "tag `\(key)`")
        }
        return tags
    }

    mutating func stage(_ node: Node) throws(ScriptError) -> Stage {
        var outer = try fields(node, "a profile stage", depth: 2)
        guard outer.entries.count == 1, let kind = outer.entries.first else {
            throw error(
                node, "a profile stage has exactly one of `ramp`, `hold` or `arrive`",
                hint: "e.g. `- {ramp: {to: 100, over: 10s}}` then `- {hold: {for: 1m}}`")
        }
        var inner = try fields(kind.value, "`\(kind.key)`", depth: 3)
        let result: Stage
        switch kind.key {
        case "ramp":
            guard let to = inner.take("to"), let over = inner.take("over") else {
                throw error(
                    kind.value, "`ramp` needs `to` (bots) and `over` (a duration)", hint: "{to: 100, over: 30s}")
            }
            result = .ramp(
                to: try integer(to, "ramp `to`", in: 0...ScriptLoader.maxBots), over: try duration(over, "ramp `over`"))
            try inner.finish(self, known: ["to", "over"])
        case "hold":
            guard let length = inner.take("for") else {
                throw error(kind.value, "`hold` needs `for` (a duration)", hint: "{for: 5m}")
            }
            result = .hold(for: try duration(length, "hold `for`", positive: true))
            try inner.finish(self, known: ["for"])
        case "arrive":
            guard let rate = inner.take("rate"), let length = inner.take("for") else {
                throw error(
                    kind.value, "`arrive` needs `rate` (new bots per second) and `for` (a duration)",
                    hint: "{rate: 20/s, for: 1m, max: 2000}")
            }
            let cap = try inner.take("max").map { (node) throws(ScriptError) in
                try integer(node, "arrive `max`", in: 1...ScriptLoader.maxBots)
            }
            result = .arrive(
                rate: try self.rate(rate, "arrive `rate`", max: 100_000),
                for: try duration(length, "arrive `for`", positive: true), max: cap ?? 10_000)
            try inner.finish(self, known: ["rate", "for", "max"])
        default:
            throw error(
                kind.keyNode, "unknown profile stage `\(kind.key)`",
                hint: suggestion(kind.key, ["ramp", "hold", "arrive"]).map { "did you mean `\($0)`?" }
                    ?? "use ramp (closed model), hold, or arrive (open model)")
        }
        _ = outer.take(kind.key)
        return result
    }

    /// The script's protocol: `protocol: enet`, or `protocol: {name: enet, …options}`, or the vocabulary's default
    /// when the key is absent; its options are decoded by the protocol's entry.
    mutating func protocolBlock(_ node: Node?, root: Node) throws(ScriptError) -> (
        String, ScriptVocabulary.ProtocolEntry, OptionValue
    ) {
        let known = vocabulary.protocols.keys.sorted()
        func entry(_ name: String, at node: Node) throws(ScriptError) -> ScriptVocabulary.ProtocolEntry {
            guard let entry = vocabulary.protocols[name] else {
                throw error(
                    node, "unknown protocol `\(name)`",
                    hint: known.isEmpty
                        ? "this program registered no protocol"
                        : (suggestion(name, known).map { "did you mean `\($0)`? " } ?? "")
                            + "choose one of: \(known.joined(separator: ", "))")
            }
            return entry
        }
        guard let node else {
            let name = vocabulary.defaultProtocol
            let found = try entry(name, at: root)
            var options = ScriptOptions(
                reader: self, fields: Fields(node: root, what: "protocol", entries: []), depth: 1)
            return (name, found, try found.configuration(&options))
        }
        if case .scalar = node {
            let name = try string(node, "protocol").trimmed.lowercased()
            let found = try entry(name, at: node)
            var options = ScriptOptions(
                reader: self, fields: Fields(node: node, what: "protocol", entries: []), depth: 1)
            return (name, found, try found.configuration(&options))
        }
        var fields = try self.fields(node, "`protocol`", depth: 1)
        guard let nameNode = fields.take("name") else {
            throw error(
                node, "`protocol` has no `name`",
                hint:
                    "write `protocol: {name: \(known.first ?? "snap"), …}` or just `protocol: \(known.first ?? "snap")`"
            )
        }
        let name = try string(nameNode, "protocol name").trimmed.lowercased()
        let found = try entry(name, at: nameNode)
        var options = ScriptOptions(reader: self, fields: fields, depth: 1)
        let decoded = try found.configuration(&options)
        try options.finish(known: ["name"] + found.configurationKeys)
        return (name, found, decoded)
    }

    mutating func persona(_ node: Node, entry: ScriptVocabulary.ProtocolEntry, configuration: OptionValue)
        throws(ScriptError) -> Persona
    {
        var f = try fields(node, "a persona", depth: 2)
        guard let nameNode = f.take("name") else {
            throw error(node, "a persona has no `name`", hint: "add `name: chaser` (it labels the persona's metrics)")
        }
        let name = try label(nameNode, "persona name")
        let behaviorNode = f.take("behavior")
        let declared = try behaviorNode.map { (node) throws(ScriptError) in try string(node, "behavior").trimmed }
        let weight =
            try f.take("weight").map { (n) throws(ScriptError) in try integer(n, "weight", in: 1...10_000) } ?? 1
        let inputRateNode = f.take("input_rate")
        var link = LinkProfile.perfect
        if let linkNode = f.take("link") {
            var l = try fields(linkNode, "link", depth: 3)
            link.latency =
                try l.take("latency").map { (n) throws(ScriptError) in try duration(n, "link latency") } ?? .zero
            link.jitter =
                try l.take("jitter").map { (n) throws(ScriptError) in try duration(n, "link jitter") } ?? .zero
            link.loss = try l.take("loss").map { (n) throws(ScriptError) in try percentage(n, "link loss") } ?? 0
            link.duplicate =
                try l.take("duplicate").map { (n) throws(ScriptError) in try percentage(n, "link duplicate") } ?? 0
            link.reorder =
                try l.take("reorder").map { (n) throws(ScriptError) in try percentage(n, "link reorder") } ?? 0
            guard link.latency <= .seconds(10), link.jitter <= .seconds(10) else {
                throw error(
                    linkNode, "link latency and jitter are limited to 10s", hint: "a 10 s link is already a dead one")
            }
            try l.finish(self, known: ["latency", "jitter", "loss", "duplicate", "reorder"])
        }
        var transport: Transport?
        if let transportNode = f.take("transport") {
            let chosen = try choice(transportNode, "transport", Transport.self)
            guard entry.transports.contains(chosen) else {
                throw error(
                    transportNode, "this protocol does not run over \(chosen.rawValue)",
                    hint: "it runs over \(entry.transports.map(\.rawValue).sorted().joined(separator: ", "))")
            }
            transport = chosen
        }
        var target: Target?
        if let targetNode = f.take("target") {
            do {
                target = try Target(parsing: try string(targetNode, "target"))
            } catch {
                throw self.error(targetNode, "\(error)")
            }
            if let target, !entry.transports.contains(target.transport) {
                throw self.error(
                    targetNode, "this protocol does not run over \(target.transport.rawValue)",
                    hint: "it runs over \(entry.transports.map(\.rawValue).sorted().joined(separator: ", "))")
            }
        }
        let tags =
            try f.take("tags").map { (node) throws(ScriptError) in try self.tags(node, owner: "persona `\(name)`") }
            ?? [:]
        var steps: [Step] = []
        if let stepsNode = f.take("steps") {
            let items = try sequence(stepsNode, "steps", depth: 3, limit: ScriptLoader.maxSteps)
            for (index, item) in items.enumerated() {
                let step = try self.step(item, chat: entry.chat)
                if case .repeat = step, index != items.count - 1 {
                    throw error(item, "`repeat` must be the last step", hint: "steps after it would never run")
                }
                if case .quit = step, index != items.count - 1 {
                    throw error(item, "`quit` must be the last step", hint: "steps after it would never run")
                }
                steps.append(step)
            }
            guard !steps.isEmpty else {
                throw error(stepsNode, "`steps` is empty", hint: "remove it to just play matches")
            }
        }
        // What is left belongs to the protocol, then to the behaviour; a key neither reads is refused below.
        var options = ScriptOptions(reader: self, fields: f, depth: 2)
        let declaredGames = declared.flatMap { entry.behaviors[$0]?.games ?? entry.behaviors[$0.lowercased()]?.games }
        let decoded = try entry.persona(
            &options, configuration,
            ScriptVocabulary.PersonaContext(behavior: declared, behaviorGames: declaredGames, games: vocabulary.games))
        guard let behaviorText = declared ?? decoded.defaultBehavior else {
            throw error(
                node, "persona `\(name)` does not name a `behavior`",
                hint: "add `behavior:` with one of \(entry.behaviors.keys.sorted().joined(separator: ", "))")
        }
        guard let behaviorEntry = entry.behaviors[behaviorText] ?? entry.behaviors[behaviorText.lowercased()] else {
            let names = entry.behaviors.keys.sorted()
            if let other = vocabulary.protocols.first(where: { $0.value.behaviors[behaviorText] != nil })?.key {
                throw error(
                    behaviorNode ?? node,
                    "behavior `\(behaviorText)` belongs to protocol `\(other)`, not to this script's",
                    hint: "set `protocol: \(other)` at the top of the script, or choose one of: "
                        + names.joined(separator: ", "))
            }
            throw error(
                behaviorNode ?? node, "unknown behavior `\(behaviorText)`",
                hint: (suggestion(behaviorText, names).map { "did you mean `\($0)`? " } ?? "")
                    + "choose one of: \(names.joined(separator: ", "))")
        }
        let behavior = BehaviorName(
            rawValue: entry.behaviors[behaviorText] != nil ? behaviorText : behaviorText.lowercased())
        let behaviorOptions = try behaviorEntry.options(&options, decoded.configuration)
        let inputRate =
            try inputRateNode.map { (n) throws(ScriptError) in try rate(n, "input_rate", max: 120) }
            ?? decoded.defaultInputRate
        var unusable: [String: String] = [:]
        for (other, otherEntry) in entry.behaviors where other != behavior.rawValue {
            for key in otherEntry.keys where options.contains(key) && unusable[key] == nil {
                unusable[key] = "only behavior `\(other)` uses it, and `\(name)` is `\(behavior.rawValue)`"
            }
        }
        try options.fields.finish(
            self, known: Self.personaKeys + entry.personaKeys + behaviorEntry.keys, unusable: unusable)
        return Persona(
            name: name, weight: weight, gameName: decoded.gameName, behavior: behavior, inputRate: inputRate,
            link: link, transport: transport, target: target,
            steps: steps.isEmpty ? [.playUntilMatchOver, .repeat(times: nil)] : steps,
            connection: decoded.configuration, options: behaviorOptions, isLegit: behaviorEntry.isLegit, tags: tags)
    }

    mutating func step(_ node: Node, chat: (@Sendable (String) -> String?)?) throws(ScriptError) -> Step {
        let f = try fields(node, "a step", depth: 4)
        guard f.entries.count == 1, let entry = f.entries.first else {
            throw error(
                node, "a step has exactly one key",
                hint: "one of: chat, play, think, reconnect, repeat, quit — e.g. `- {think: 2s..5s}`")
        }
        let value = entry.value
        switch entry.key {
        case "chat":
            let text = try string(value, "chat text")
            guard let chat else {
                throw error(entry.keyNode, "this protocol has no chat", hint: "remove the `chat` step")
            }
            if let problem = chat(text) { throw error(value, problem) }
            return .chat(text)
        case "play":
            let text = try string(value, "play")
            if text == "until_match_over" { return .playUntilMatchOver }
            guard let length = Quantity.duration(text), length > .zero else {
                throw error(
                    value, "play `\(text)` is neither `until_match_over` nor a duration",
                    hint: "write `play: until_match_over` or `play: 30s`")
            }
            return .play(for: length)
        case "think":
            return .think(try range(value, "think"))
        case "reconnect":
            guard try string(value, "reconnect") == "true" else { throw error(value, "write `reconnect: true`") }
            return .reconnect
        case "quit":
            guard try string(value, "quit") == "true" else { throw error(value, "write `quit: true`") }
            return .quit
        case "repeat":
            let text = try string(value, "repeat")
            if text == "true" { return .repeat(times: nil) }
            return .repeat(times: try integer(value, "repeat", in: 1...1_000_000))
        default:
            throw error(
                entry.keyNode, "unknown step `\(entry.key)`",
                hint: suggestion(entry.key, ["chat", "play", "think", "reconnect", "repeat", "quit"]).map {
                    "did you mean `\($0)`?"
                }
                    ?? "steps are chat, play, think, reconnect, repeat and quit")
        }
    }

    /// The labels a threshold may filter on.
    static let thresholdFilterKeys = ["persona", "game", "protocol"]

    /// Splits `rtt_p99{persona:chaser, game:puck}` into the figure's name and its filter, checking each label and
    /// value against the script.
    func thresholdFilter(
        _ key: String, keyNode: Node, personas: [Persona], protocolName: String
    ) throws(ScriptError) -> (name: String, filter: [String: String]) {
        guard let open = key.firstIndex(of: "{") else { return (key, [:]) }
        let name = String(key[..<open]).trimmed
        guard key.hasSuffix("}"), key.index(after: open) < key.endIndex else {
            throw error(
                keyNode, "threshold `\(key)` has a filter with no closing `}`",
                hint: "write \(name){persona:NAME}: \"< 80ms\" (quote the key inside a {…} mapping)")
        }
        let inside = key[key.index(after: open)..<key.index(before: key.endIndex)]
        var filter: [String: String] = [:]
        let labels = Self.thresholdFilterKeys + Array(Set(personas.flatMap(\.tags.keys))).sorted()
        for part in inside.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: ":", maxSplits: 1).map { String($0).trimmed }
            guard pair.count == 2, !pair[0].isEmpty, !pair[1].isEmpty else {
                throw error(
                    keyNode, "threshold `\(key)`: `\(String(part).trimmed)` is not label:value",
                    hint: "write \(name){persona:chaser} or \(name){game:puck, persona:chaser}")
            }
            let (label, value) = (pair[0], pair[1])
            guard labels.contains(label) else {
                throw error(
                    keyNode, "threshold `\(key)` filters on `\(label)`, which no series carries",
                    hint: (suggestion(label, labels).map { "did you mean `\($0)`? " } ?? "")
                        + "filter on \(labels.joined(separator: ", ")) (a persona's `tags` add labels)")
            }
            guard filter[label] == nil else {
                throw error(keyNode, "threshold `\(key)` filters on `\(label)` twice", hint: "keep one")
            }
            if label == "persona", personas.contains(where: { $0.name == value && !$0.isLegit }) {
                throw error(
                    keyNode,
                    "threshold `\(key)`: persona `\(value)` is rogue, and a rogue persona's traffic is never "
                        + "judged", hint: "filter on a persona that plays by the rules")
            }
            let known: [String] =
                switch label {
                case "persona": personas.filter(\.isLegit).map(\.name)
                case "game": Array(Set(personas.map(\.gameName))).sorted()
                case "protocol": [protocolName]
                default: Array(Set(personas.filter(\.isLegit).compactMap { $0.tags[label] })).sorted()
                }
            guard known.contains(value) else {
                throw error(
                    keyNode, "threshold `\(key)`: no \(label) `\(value)` in this script, so nothing would be judged",
                    hint: (suggestion(value, known).map { "did you mean `\($0)`? " } ?? "")
                        + "its \(label)s: \(known.joined(separator: ", "))")
            }
            filter[label] = value
        }
        return (name, filter)
    }

    mutating func threshold(
        _ written: String, keyNode: Node, value: Node, personas: [Persona], protocolName: String
    ) throws(ScriptError) -> Threshold {
        let (key, filter) = try thresholdFilter(
            written, keyNode: keyNode, personas: personas, protocolName: protocolName)
        guard let metric = ThresholdMetric(name: key) else {
            let names = ThresholdMetric.allNames
            throw error(
                keyNode, "unknown threshold `\(key)`",
                hint: (suggestion(key, names).map { "did you mean `\($0)`? " } ?? "")
                    + "thresholds name a percentile (rtt_p99, snapshot_age_p99, tick_lateness_p99, handshake_p95), "
                    + "a count (desyncs, errors, mispredictions) or a rate (handshake_failure_rate, packet_loss_rate)")
        }
        var window: Duration?
        var abortOnFail = false
        var delayAbortEval = Duration.zero
        var limitNode = value
        if case .mapping = value {
            var options = try fields(value, "threshold `\(key)`", depth: 3)
            guard let node = options.take("limit") else {
                throw error(
                    value, "threshold `\(key)` has no `limit`",
                    hint: "write \(key): {limit: \(metric.example), window: 5m, abort_on_fail: true}")
            }
            limitNode = node
            if let node = options.take("window") {
                let length = try duration(node, "threshold `\(key)` window", positive: true)
                guard length >= .seconds(1), length.components.attoseconds == 0 else {
                    throw error(
                        node, "threshold `\(key)` window `\(length.scriptText)` is not whole seconds",
                        hint: "windows are judged once a second: write 1s or more in whole seconds (30s, 5m)")
                }
                window = length
            }
            if let node = options.take("abort_on_fail") {
                abortOnFail = try flag(node, "threshold `\(key)` abort_on_fail")
            }
            if let node = options.take("delay_abort_eval") {
                guard abortOnFail else {
                    throw error(
                        node, "threshold `\(key)` has delay_abort_eval without abort_on_fail",
                        hint: "it delays stopping the run; add `abort_on_fail: true` or remove it")
                }
                delayAbortEval = try duration(node, "threshold `\(key)` delay_abort_eval")
            }
            if metric == .count(.exporterFailures), window != nil || abortOnFail {
                throw error(
                    value, "threshold `\(key)` is judged over the whole run only",
                    hint: "the exporter's failures are counted apart from the bots' figures; write \(key): \"== 0\"")
            }
            try options.finish(self, known: Self.thresholdKeys)
        }
        let value = limitNode
        let text = try string(value, "threshold `\(key)`").trimmed
        guard
            let comparison = Threshold.Comparison.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count })
                .first(where: { text.hasPrefix($0.rawValue) })
        else {
            throw error(
                value, "threshold `\(key)` must start with <, <=, >, >=, == or !=",
                hint: "write \(key): \(metric.example)")
        }
        let operand = String(text.dropFirst(comparison.rawValue.count)).trimmed
        let limit: Double?
        switch metric {
        case .percentile(let histogram, _):
            if histogram.isPixels {
                limit = operand.hasSuffix("px") ? Double(String(operand.dropLast(2)).trimmed) : nil
            } else {
                limit = Quantity.duration(operand)?.seconds
            }
        case .count:
            limit = Double(operand).flatMap { $0 >= 0 && $0 == $0.rounded() ? $0 : nil }
        case .rate:
            limit = Quantity.percentage(operand)
        }
        guard let limit else {
            throw error(
                value, "threshold `\(key)` has a limit `\(operand)` in the wrong unit",
                hint: "write \(key): \(metric.example)")
        }
        // A count only grows over the run: a `>` limit on the run so far fails at the start and may pass later, so
        // stopping at its first failure would stop every run at once.
        if case .count = metric, abortOnFail, window == nil, delayAbortEval == .zero,
            comparison == .greater || comparison == .greaterOrEqual
        {
            throw error(
                keyNode, "threshold `\(key)` \(text) with abort_on_fail would stop the run at its first second",
                hint: "a count grows during the run: add a window (`window: 1m`) or `delay_abort_eval: 5m`")
        }
        if !filter.isEmpty, metric == .count(.exporterFailures) {
            throw error(
                keyNode, "threshold `\(written)`: the exporter's failures belong to no persona or game",
                hint: "write exporter_failures without a filter")
        }
        return Threshold(
            metric: metric, comparison: comparison, limit: limit, text: text, window: window,
            abortOnFail: abortOnFail, delayAbortEval: delayAbortEval, filter: filter)
    }

    func flag(_ node: Node, _ what: String) throws(ScriptError) -> Bool {
        switch try string(node, what).trimmed.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(node, "\(what) must be true or false")
        }
    }
}
