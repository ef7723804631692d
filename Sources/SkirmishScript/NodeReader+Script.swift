import SkirmishOpponent
import SkirmishWire
import Yams

extension NodeReader {
    static let scriptKeys = ["name", "description", "profile", "personas", "thresholds"]
    static let thresholdKeys = ["limit", "window", "abort_on_fail", "delay_abort_eval"]
    static let personaKeys = [
        "name", "weight", "game", "behavior", "seats", "input_rate", "link", "transport", "difficulty",
        "snap_reaction", "chat_every", "reconnect_every", "offline_for", "rogue_rate", "steps",
    ]

    mutating func script(_ root: Node) throws(ScriptError) -> Script {
        var fields = try fields(root, "the script", depth: 0)
        guard let nameNode = fields.take("name") else {
            throw error(root, "the script has no `name`", hint: "add `name: my-test` (it labels every metric)")
        }
        let name = try label(nameNode, "name")
        let summary =
            try fields.take("description").map { (node) throws(ScriptError) in try string(node, "description") } ?? ""
        var profile: [Stage] = []
        if let node = fields.take("profile") {
            for item in try sequence(node, "profile", depth: 1, limit: ScriptLoader.maxStages) {
                profile.append(try stage(item))
            }
        }
        guard let personasNode = fields.take("personas") else {
            throw error(
                root, "the script has no `personas`",
                hint: "add at least one, e.g. `personas: [{name: chaser, game: puck}]`")
        }
        var personas: [Persona] = []
        for item in try sequence(personasNode, "personas", depth: 1, limit: ScriptLoader.maxPersonas) {
            let persona = try persona(item)
            if personas.contains(where: { $0.name == persona.name }) {
                throw error(item, "two personas are named `\(persona.name)`", hint: "persona names must be unique")
            }
            personas.append(persona)
        }
        guard !personas.isEmpty else {
            throw error(personasNode, "`personas` is empty", hint: "add at least one persona")
        }
        var thresholds: [Threshold] = []
        if let node = fields.take("thresholds") {
            var entries = try self.fields(node, "thresholds", depth: 1)
            for entry in entries.entries {
                _ = entries.take(entry.key)
                // One condition, or a list of them on the same figure (`rtt_p99: ["< 50ms", {limit: …, window: 1m}]`).
                if case .sequence = entry.value {
                    for item in try sequence(entry.value, "threshold `\(entry.key)`", depth: 2, limit: 8) {
                        thresholds.append(try threshold(entry.key, keyNode: entry.keyNode, value: item))
                    }
                } else {
                    thresholds.append(try threshold(entry.key, keyNode: entry.keyNode, value: entry.value))
                }
            }
        }
        try fields.finish(self, known: Self.scriptKeys)
        return Script(name: name, summary: summary, profile: profile, personas: personas, thresholds: thresholds)
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

    /// A built-in behaviour's name, or one the program registered; an unknown name's hint lists (and suggests from)
    /// both.
    func behaviorName(_ node: Node) throws(ScriptError) -> BehaviorName {
        let text = try string(node, "behavior").trimmed
        if customBehaviors[text] != nil { return BehaviorName(rawValue: text) }
        let builtIn = BehaviorName(rawValue: text.lowercased())
        if BehaviorName.allCases.contains(builtIn) { return builtIn }
        let options = BehaviorName.allCases.map(\.rawValue) + customBehaviors.keys.sorted()
        throw error(
            node, "unknown behavior `\(text)`",
            hint: (suggestion(text, options).map { "did you mean `\($0)`? " } ?? "")
                + "choose one of: \(options.joined(separator: ", "))")
    }

    mutating func persona(_ node: Node) throws(ScriptError) -> Persona {
        var f = try fields(node, "a persona", depth: 2)
        guard let nameNode = f.take("name") else {
            throw error(node, "a persona has no `name`", hint: "add `name: chaser` (it labels the persona's metrics)")
        }
        let name = try label(nameNode, "persona name")
        let behaviorNode = f.take("behavior")
        let declared = try behaviorNode.map { (node) throws(ScriptError) in try behaviorName(node) }
        let declaredGames = declared.flatMap { name in
            customBehaviors[name.rawValue].map { $0.isEmpty ? nil : $0 } ?? name.games
        }
        let description: GameDescription
        if let gameNode = f.take("game") {
            description = try self.game(gameNode)
        } else if let games = declaredGames, games.count == 1, let only = games.first, let known = self.game(only) {
            description = known
        } else {
            throw error(
                node, "persona `\(name)` does not say which `game` it plays",
                hint: "add `game:` with one of \(self.games.map(\.name).joined(separator: ", "))")
        }
        let game = description.kind
        guard let behavior = declared ?? BehaviorName.default(for: game) else {
            throw error(
                node, "persona `\(name)` plays \(description.name), which has no built-in behaviour",
                hint: "add `behavior:` naming one registered for \(description.name)")
        }
        if let games = declaredGames, !games.contains(game), let behaviorNode {
            throw error(
                behaviorNode, "behavior `\(behavior.rawValue)` cannot play \(description.name)",
                hint: "it plays \(games.map { self.game($0)?.name ?? $0.description }.sorted().joined(separator: ", "))"
            )
        }
        let weight =
            try f.take("weight").map { (n) throws(ScriptError) in try integer(n, "weight", in: 1...10_000) } ?? 1
        let seatRange = description.seats
        let seats =
            try f.take("seats").map { (n) throws(ScriptError) in
                try integer(n, "seats for \(description.name)", in: seatRange)
            } ?? min(max(2, seatRange.lowerBound), seatRange.upperBound)
        let defaultRate: Double = game == .puck ? 30 : 2
        let inputRate =
            try f.take("input_rate").map { (n) throws(ScriptError) in try rate(n, "input_rate", max: 120) }
            ?? defaultRate
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
        let transport = try f.take("transport").map { (n) throws(ScriptError) in
            try choice(n, "transport", Transport.self)
        }
        var unusable: [String: String] = [:]
        func option<T>(_ key: String, for owner: BehaviorName, _ read: (Node) throws(ScriptError) -> T)
            throws(ScriptError) -> T?
        {
            guard behavior == owner else {
                if f.contains(key) {
                    unusable[key] = "only behavior `\(owner.rawValue)` uses it, and `\(name)` is `\(behavior.rawValue)`"
                }
                return nil
            }
            return try f.take(key).map(read)
        }
        let difficulty = try option("difficulty", for: .ai) { (n) throws(ScriptError) in
            try choice(n, "difficulty", Opponent.Difficulty.self)
        }
        let reaction = try option("snap_reaction", for: .snapPlayer) { (n) throws(ScriptError) in
            var r = try fields(n, "snap_reaction", depth: 3)
            guard let mean = r.take("mean") else {
                throw error(n, "snap_reaction needs `mean`", hint: "{mean: 600ms, stddev: 150ms}")
            }
            let spec = ReactionSpec(
                mean: try duration(mean, "snap_reaction mean"),
                stddev: try r.take("stddev").map { (s) throws(ScriptError) in try duration(s, "snap_reaction stddev") }
                    ?? .zero)
            try r.finish(self, known: ["mean", "stddev"])
            return spec
        }
        let chatEvery = try option("chat_every", for: .chatter) { (n) throws(ScriptError) in try range(n, "chat_every")
        }
        let reconnectEvery = try option("reconnect_every", for: .reconnector) { (n) throws(ScriptError) in
            try range(n, "reconnect_every")
        }
        let offlineFor = try option("offline_for", for: .reconnector) { (n) throws(ScriptError) in
            try range(n, "offline_for")
        }
        let rogueRate = try option("rogue_rate", for: .rogue) { (n) throws(ScriptError) in
            try rate(n, "rogue_rate", max: 10_000)
        }
        var steps: [Step] = []
        if let stepsNode = f.take("steps") {
            let items = try sequence(stepsNode, "steps", depth: 3, limit: ScriptLoader.maxSteps)
            for (index, item) in items.enumerated() {
                let step = try self.step(item)
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
        try f.finish(self, known: Self.personaKeys, unusable: unusable)
        return Persona(
            name: name, weight: weight, game: game, gameName: description.name, behavior: behavior, seats: seats,
            inputRate: inputRate, link: link,
            transport: transport, difficulty: behavior == .ai ? difficulty ?? .medium : nil,
            snapReaction: behavior == .snapPlayer
                ? reaction ?? ReactionSpec(mean: .milliseconds(600), stddev: .milliseconds(150)) : nil,
            chatEvery: behavior == .chatter ? chatEvery ?? .seconds(2) ... .seconds(5) : nil,
            reconnectEvery: behavior == .reconnector ? reconnectEvery ?? .seconds(10) ... .seconds(20) : nil,
            offlineFor: behavior == .reconnector ? offlineFor ?? .seconds(1) ... .seconds(3) : nil,
            rogueRate: behavior == .rogue ? rogueRate ?? 20 : nil,
            steps: steps.isEmpty ? [.playUntilMatchOver, .repeat(times: nil)] : steps)
    }

    mutating func step(_ node: Node) throws(ScriptError) -> Step {
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
            guard text.utf8.count <= WireLimits.maxChat, !text.utf8.contains(0) else {
                throw error(value, "chat text must be at most \(WireLimits.maxChat) bytes with no NUL")
            }
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

    mutating func threshold(_ key: String, keyNode: Node, value: Node) throws(ScriptError) -> Threshold {
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
        return Threshold(
            metric: metric, comparison: comparison, limit: limit, text: text, window: window,
            abortOnFail: abortOnFail, delayAbortEval: delayAbortEval)
    }

    func flag(_ node: Node, _ what: String) throws(ScriptError) -> Bool {
        switch try string(node, what).trimmed.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(node, "\(what) must be true or false")
        }
    }
}
