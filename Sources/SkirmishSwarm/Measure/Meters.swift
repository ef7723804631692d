import Logging
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// The metric series one persona's bots write on one event loop, resolved once so the hot path is an array index.
///
/// This is the only place the swarm names metric families; every bot of the persona on this loop shares one
/// `Meters`, and the loop's ``MetricsShard`` is merged with the others' when the exporter or the summary reads it.
final class Meters {
    let shard: MetricsShard
    let game: GameKind
    let persona: String
    let isLegit: Bool

    private var packetsSent: [CounterID?]
    private var packetsReceived: [CounterID?]
    let bytesSent: CounterID
    let bytesReceived: CounterID
    let packetsLost: CounterID
    let resends: CounterID
    let mispredictions: CounterID
    let matchesStarted: CounterID
    let matchesCompleted: CounterID
    let reconnects: CounterID
    let handshakes: CounterID
    let handshakeFailures: CounterID
    let inputsSent: CounterID
    let inputsLate: CounterID
    let pingsSent: CounterID
    let pongsReceived: CounterID
    let botsConnected: GaugeID
    let rtt: HistogramID
    let snapshotAge: HistogramID
    let tickLateness: HistogramID
    let handshake: HistogramID
    let reconnect: HistogramID
    let predictionError: HistogramID
    /// Desync detection delays (`skirmish_desync_detection_seconds`).
    let desyncDetection: HistogramID
    /// The run's desync episodes, kept in full for `summary.json` (shared by every persona and loop).
    let episodes: DesyncEpisodeLog
    /// One connected bot's bytes per second each way, sampled once a second (``Bot``'s traffic sample).
    let bytesSentPerSecond: HistogramID
    let bytesReceivedPerSecond: HistogramID
    private var desyncs: [String: CounterID] = [:]
    private var errors: [String: CounterID] = [:]
    private var rogue: [String: CounterID] = [:]
    private var checks: [String: (judged: CounterID, failed: CounterID)] = [:]
    /// The built-in checks' series by ``ReplyCheck`` raw value: judged on every reply, so an array index, not a
    /// string lookup.
    private var builtInChecks: [(judged: CounterID, failed: CounterID)?] = Array(
        repeating: nil, count: ReplyCheck.allCases.count)

    /// The persona these meters count for (shared by all its bots, so an agent's context refers to it instead of
    /// copying it on every call).
    let spec: Persona
    /// The loop's logger with this persona (`persona`, `game`): desync episodes are logged here.
    let logger: Logger

    convenience init(
        shard: MetricsShard, spec: Persona, logger: Logger = Logger(label: "skirmish.swarm"),
        episodes: DesyncEpisodeLog = DesyncEpisodeLog()
    ) {
        self.init(
            shard: shard, persona: spec.name, game: spec.game, isLegit: spec.isLegit, spec: spec, logger: logger,
            episodes: episodes)
    }

    init(
        shard: MetricsShard, persona: String, game: GameKind, isLegit: Bool, spec: Persona? = nil,
        logger: Logger = Logger(label: "skirmish.swarm"), episodes: DesyncEpisodeLog = DesyncEpisodeLog()
    ) {
        self.episodes = episodes
        let spec = spec ?? Persona(name: persona, game: game, behavior: isLegit ? .idle : .rogue)
        self.spec = spec
        var logger = logger
        logger[metadataKey: "persona"] = "\(persona)"
        // The registered name, as in the metric labels (`count`, not `game-4`).
        logger[metadataKey: "game"] = "\(spec.gameName)"
        self.logger = logger
        self.shard = shard
        self.game = game
        self.persona = persona
        self.isLegit = isLegit
        let base = Labels(["game": self.spec.gameName, "persona": persona])
        // Only the types this game's client can send or receive exist from the start (at 0); anything else (a
        // rogue's wrong-direction packet) gets its series the first time it happens.
        packetsSent = MessageType.allCases.map { type in
            Meters.expected(type, game: game, from: .client)
                ? shard.counter(SkirmishMetrics.packetsSent, Meters.sentLabels(type, base)) : nil
        }
        packetsReceived = MessageType.allCases.map { type in
            Meters.expected(type, game: game, from: .server)
                ? shard.counter(SkirmishMetrics.packetsReceived, base.adding(["type": type.name])) : nil
        }
        bytesSent = shard.counter(SkirmishMetrics.bytesSent, base)
        bytesReceived = shard.counter(SkirmishMetrics.bytesReceived, base)
        packetsLost = shard.counter(SkirmishMetrics.packetsLost, base)
        resends = shard.counter(SkirmishMetrics.reliableResends, base)
        mispredictions = shard.counter(SkirmishMetrics.mispredictions, base)
        matchesStarted = shard.counter(SkirmishMetrics.matchesStarted, base)
        matchesCompleted = shard.counter(SkirmishMetrics.matchesCompleted, base)
        reconnects = shard.counter(SkirmishMetrics.reconnects, base)
        handshakes = shard.counter(SkirmishMetrics.handshakes, base.adding(["outcome": "ok"]))
        handshakeFailures = shard.counter(SkirmishMetrics.handshakes, base.adding(["outcome": "failed"]))
        inputsSent = shard.counter(SkirmishMetrics.inputs, base.adding(["timing": "on_time"]))
        inputsLate = shard.counter(SkirmishMetrics.inputs, base.adding(["timing": "late"]))
        pingsSent = shard.counter(SkirmishMetrics.pings, base.adding(["direction": "sent"]))
        pongsReceived = shard.counter(SkirmishMetrics.pings, base.adding(["direction": "answered"]))
        botsConnected = shard.gauge(SkirmishMetrics.botsConnected, base)
        rtt = shard.histogram(SkirmishMetrics.rtt, base)
        snapshotAge = shard.histogram(SkirmishMetrics.snapshotAge, base)
        tickLateness = shard.histogram(SkirmishMetrics.tickLateness, base)
        handshake = shard.histogram(SkirmishMetrics.handshake, base)
        reconnect = shard.histogram(SkirmishMetrics.reconnect, base)
        predictionError = shard.histogram(SkirmishMetrics.predictionError, base)
        desyncDetection = shard.histogram(SkirmishMetrics.desyncDetection, base)
        bytesSentPerSecond = shard.histogram(SkirmishMetrics.botBytesPerSecond, base.adding(["direction": "sent"]))
        bytesReceivedPerSecond = shard.histogram(
            SkirmishMetrics.botBytesPerSecond, base.adding(["direction": "received"]))
        // Dashboards and alerts on desyncs and errors need these series at 0 on a clean run ("No data" reads as
        // "not measured"), so the parts this game's replica checks and the error kinds any bot can meet exist from
        // the first push.
        for part in Meters.desyncParts(game) {
            desyncs[part] = shard.counter(SkirmishMetrics.desyncs, base.adding(["part": part]))
        }
        for kind in Meters.commonErrorKinds {
            errors[kind] = shard.counter(SkirmishMetrics.errors, base.adding(["kind": kind]))
        }
        // The checks every bot of this game makes exist at 0 from the first push, like the desync parts.
        if isLegit {
            for check in ReplyCheck.builtIn(game) {
                let labels = base.adding(["check": check.name])
                let ids = (
                    judged: shard.counter(SkirmishMetrics.checks, labels),
                    failed: shard.counter(SkirmishMetrics.checksFailed, labels)
                )
                checks[check.name] = ids
                builtInChecks[check.rawValue] = ids
            }
        }
    }

    /// Error kinds any bot can meet, whatever its game or behaviour: created at 0 with every persona's series.
    static let commonErrorKinds = ["handshake_timeout", "silence_timeout", "ack_timeout", "transport", "server_quit"]

    /// The parts a game's client replica reports desyncs in (`SkirmishGames`' `ReplicaCheck.desync(part:)`): for
    /// Puck the predicted `puck`, `paddles`, `score` and `phase` (and `hash`, a snapshot that fails its own hash);
    /// for Snap the face-up `piles`, the `turn`, a snap call's `outcome`, the `deal` and `hash`; for Suns
    /// the other player's `captures`, checked against its strikes. Suns tallies travel only to the server, which
    /// compares them (`skirmish_server_desyncs_total`): no client sees the other's.
    static func desyncParts(_ game: GameKind) -> [String] {
        switch game {
        case .puck: ["hash", "puck", "paddles", "score", "phase"]
        case .snap: ["hash", "piles", "turn", "outcome", "deal"]
        case .suns: ["captures"]
        default: []
        }
    }

    /// Whether a legitimate client of `game` ever sees `type` coming from `sender`: control messages of every game
    /// plus the game's own range of the catalogue, in a direction the protocol allows.
    static func expected(_ type: MessageType, game: GameKind, from sender: Role) -> Bool {
        guard type.direction.allows(sender) else { return false }
        // The quit messages sit in Snap's range but end a session of any game (ServerQuit at shutdown; Suns relays
        // OtherClientQuit too).
        if type == .serverQuit || type == .otherClientQuit || type == .clientQuit { return true }
        switch type.rawValue {
        case ..<0x0064: return true
        case 0x0064..<0x00C8: return game == .snap
        case 0x00C8..<0x012C: return game == .puck
        case 0x012C..<0x0190: return game == .suns
        // A game added by a program speaks only in `GamePayload`s.
        default: return !GameKind.builtIn.contains(game)
        }
    }

    private static func sentLabels(_ type: MessageType, _ base: Labels) -> Labels {
        base.adding(["type": type.name, "delivery": "\(type.delivery)"])
    }

    /// Records a latency or error sample; rogue personas record none, so their traffic never colours the legitimate
    /// distributions.
    func record(_ id: HistogramID, seconds: Double) {
        if isLegit { shard.record(id, seconds: seconds) }
    }

    func record(_ id: HistogramID, value: Double) {
        if isLegit { shard.record(id, value: value) }
    }

    /// Counts one desync episode of this persona's game in `part` (puck, paddles, score, deck, piles, …).
    func desync(part: String) {
        if desyncs[part] == nil {
            desyncs[part] = shard.counter(
                SkirmishMetrics.desyncs, Labels(["game": spec.gameName, "persona": persona, "part": part]))
        }
        shard.add(desyncs[part]!)
    }

    /// Counts one error of `kind` (handshake_timeout, rejected_server_full, transport, …).
    func error(_ kind: String) {
        if errors[kind] == nil {
            errors[kind] = shard.counter(
                SkirmishMetrics.errors, Labels(["game": spec.gameName, "persona": persona, "kind": kind]))
        }
        shard.add(errors[kind]!)
    }

    /// The most distinct check names one persona keeps series for; further names are counted as `other`, so a
    /// behaviour that builds names from what a server sent cannot mint series without bound.
    static let maxChecks = 32

    /// Counts one reply judged by a built-in check, and whether it failed.
    @inline(__always)
    func check(_ check: ReplyCheck, passed: Bool) {
        guard let ids = builtInChecks[check.rawValue] else { return self.check(check.name, passed: passed) }
        shard.add(ids.judged)
        if !passed { shard.add(ids.failed) }
    }

    /// Counts one reply judged by the check `name`, and whether it failed.
    func check(_ name: String, passed: Bool) {
        guard isLegit else { return }
        let ids: (judged: CounterID, failed: CounterID)
        if let known = checks[name] {
            ids = known
        } else {
            let label = checks.count < Self.maxChecks ? name : "other"
            if let other = checks[label] {
                ids = other
            } else {
                let labels = Labels(["game": spec.gameName, "persona": persona, "check": label])
                ids = (
                    shard.counter(SkirmishMetrics.checks, labels), shard.counter(SkirmishMetrics.checksFailed, labels)
                )
                checks[label] = ids
            }
        }
        shard.add(ids.judged)
        if !passed { shard.add(ids.failed) }
    }

    /// Counts one hostile packet a rogue bot sent, by kind; kept apart from the legitimate figures.
    func roguePacket(_ kind: String) {
        if rogue[kind] == nil {
            rogue[kind] = shard.counter(
                SkirmishMetrics.roguePackets, Labels(["game": spec.gameName, "persona": persona, "kind": kind]))
        }
        shard.add(rogue[kind]!)
    }
}

/// Per-packet counts, as a bot's traffic passes.
extension Meters {
    func sent(_ type: MessageType, bytes: Int) {
        if let id = packetsSent[type.index] {
            shard.add(id)
        } else {
            let id = shard.counter(
                SkirmishMetrics.packetsSent,
                Meters.sentLabels(type, Labels(["game": spec.gameName, "persona": persona])))
            packetsSent[type.index] = id
            shard.add(id)
        }
        shard.add(bytesSent, UInt64(bytes))
    }

    func sentRaw(bytes: Int) {
        shard.add(bytesSent, UInt64(bytes))
    }

    func received(_ type: MessageType, bytes: Int) {
        if let id = packetsReceived[type.index] {
            shard.add(id)
        } else {
            let id = shard.counter(
                SkirmishMetrics.packetsReceived,
                Labels(["game": spec.gameName, "persona": persona, "type": type.name]))
            packetsReceived[type.index] = id
            shard.add(id)
        }
        shard.add(bytesReceived, UInt64(bytes))
    }

    func resent(_ count: Int) {
        shard.add(resends, UInt64(count))
    }

    func lost(_ count: Int) {
        shard.add(packetsLost, UInt64(count))
    }
}
