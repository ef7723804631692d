import SkirmishNet
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

    let packetsSent: [CounterID]
    let packetsReceived: [CounterID]
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
    private var desyncs: [String: CounterID] = [:]
    private var errors: [String: CounterID] = [:]
    private var rogue: [String: CounterID] = [:]

    /// The persona these meters count for (shared by all its bots, so an agent's context refers to it instead of
    /// copying it on every call).
    let spec: Persona

    convenience init(shard: MetricsShard, spec: Persona) {
        self.init(shard: shard, persona: spec.name, game: spec.game, isLegit: spec.isLegit, spec: spec)
    }

    init(shard: MetricsShard, persona: String, game: GameKind, isLegit: Bool, spec: Persona? = nil) {
        self.spec = spec ?? Persona(name: persona, game: game, behavior: isLegit ? .idle : .rogue)
        self.shard = shard
        self.game = game
        self.persona = persona
        self.isLegit = isLegit
        let base = Labels(["game": game.description, "persona": persona])
        packetsSent = MessageType.allCases.map { type in
            shard.counter(
                SkirmishMetrics.packetsSent,
                base.adding(["type": type.name, "delivery": "\(type.delivery)"]))
        }
        packetsReceived = MessageType.allCases.map { type in
            shard.counter(SkirmishMetrics.packetsReceived, base.adding(["type": type.name]))
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
                SkirmishMetrics.desyncs, Labels(["game": game.description, "persona": persona, "part": part]))
        }
        shard.add(desyncs[part]!)
    }

    /// Counts one error of `kind` (handshake_timeout, rejected_server_full, transport, …).
    func error(_ kind: String) {
        if errors[kind] == nil {
            errors[kind] = shard.counter(
                SkirmishMetrics.errors, Labels(["game": game.description, "persona": persona, "kind": kind]))
        }
        shard.add(errors[kind]!)
    }

    /// Counts one hostile packet a rogue bot sent, by kind; kept apart from the legitimate figures.
    func roguePacket(_ kind: String) {
        if rogue[kind] == nil {
            rogue[kind] = shard.counter(
                SkirmishMetrics.roguePackets, Labels(["game": game.description, "persona": persona, "kind": kind]))
        }
        shard.add(rogue[kind]!)
    }
}

/// Per-packet counts, as a bot's traffic passes.
extension Meters {
    func sent(_ type: MessageType, bytes: Int) {
        shard.add(packetsSent[type.index])
        shard.add(bytesSent, UInt64(bytes))
    }

    func sentRaw(bytes: Int) {
        shard.add(bytesSent, UInt64(bytes))
    }

    func received(_ type: MessageType, bytes: Int) {
        shard.add(packetsReceived[type.index])
        shard.add(bytesReceived, UInt64(bytes))
    }

    func resent(_ count: Int) {
        shard.add(resends, UInt64(count))
    }

    func lost(_ count: Int) {
        shard.add(packetsLost, UInt64(count))
    }
}
