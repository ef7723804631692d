import Logging
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// The metric series one persona's bots write on one event loop, resolved once so the hot path is an array index.
///
/// This is the only place the swarm names metric families; every bot of the persona on this loop shares one
/// `Meters`, and the loop's ``MetricsShard`` is merged with the others' when the exporter or the summary reads it.
/// Which series exist from the first push comes from the persona's protocol (its packet kinds, error kinds, events,
/// checks and figures) and its behaviour (the figures, desync parts and checks it reports): a figure neither
/// measures has no series at all, so a summary shows it as absent instead of as 0.
final class Meters {
    let shard: MetricsShard
    let persona: String
    let isLegit: Bool
    /// The figures this persona's protocol and behaviour measure.
    let figures: Figures

    // Read on every packet on the meters' loop alone (see ``MetricsShard``): exclusivity not checked at run time.
    @exclusivity(unchecked) private var packetsSent: [CounterID?]
    @exclusivity(unchecked) private var packetsReceived: [CounterID?]
    @exclusivity(unchecked) private var packetBytesSent: [CounterID?]
    @exclusivity(unchecked) private var packetBytesReceived: [CounterID?]
    private let packetKinds: [PacketKind]
    private var events: [CounterID]
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
    /// Request round trips a behaviour matched (`skirmish_request_rtt_seconds`).
    let requestRTT: HistogramID
    let snapshotAge: HistogramID
    let snapshotInterval: HistogramID
    let tickLateness: HistogramID
    let handshake: HistogramID
    let reconnect: HistogramID
    let predictionError: HistogramID
    /// Desync detection delays (`skirmish_desync_detection_seconds`).
    let desyncDetection: HistogramID
    /// The run's desync episodes, kept in full for `summary.json` (shared by every persona and loop).
    let episodes: DesyncEpisodeLog
    /// One connected bot's bytes per second each way, sampled once a second (a bot's traffic sample).
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

    /// The labels of every series of this persona: game, persona and its tags.
    private let base: Labels

    /// The persona these meters count for (shared by all its bots, so an agent's context refers to it instead of
    /// copying it on every call).
    let spec: Persona
    /// The loop's logger with this persona (`persona`, `game`): desync episodes are logged here.
    let logger: Logger

    /// What the series plan of one persona is made of: its protocol's description and which of its packet kinds
    /// the persona's connection can see, and what its behaviour reports.
    struct Plan {
        var description: ProtocolDescription
        var expectsKind: (Int) -> Bool
        var behavior: BehaviorSeries

        /// The plan of `persona`'s series: its protocol's description in `catalogue`, the packet kinds its
        /// connection can see, and what its behaviour reports.
        init(of persona: Persona, in catalogue: Catalogue, protocolName: String) {
            let support = catalogue.support(of: protocolName)
            let kind = catalogue.kind(of: persona, in: protocolName)
            self.init(
                description: support?.description
                    ?? ProtocolDescription(name: protocolName, transports: [], packetKinds: [], figures: []),
                expectsKind: { kind in support?.expects(kind: kind, with: persona.connection) ?? true },
                behavior: kind?.series(for: persona) ?? BehaviorSeries())
        }

        /// A plan for a protocol whose every packet kind may occur.
        init(
            description: ProtocolDescription, expectsKind: @escaping (Int) -> Bool = { _ in true },
            behavior: BehaviorSeries = BehaviorSeries()
        ) {
            self.description = description
            self.expectsKind = expectsKind
            self.behavior = behavior
        }
    }

    init(
        shard: MetricsShard, spec: Persona, plan: Plan, logger: Logger = Logger(label: "skirmish.swarm"),
        episodes: DesyncEpisodeLog = DesyncEpisodeLog()
    ) {
        self.episodes = episodes
        self.spec = spec
        var logger = logger
        logger[metadataKey: "persona"] = "\(spec.name)"
        logger[metadataKey: "game"] = "\(spec.gameName)"
        self.logger = logger
        self.shard = shard
        persona = spec.name
        isLegit = spec.isLegit
        figures = plan.description.figures.union(plan.behavior.figures)
        // A persona's tags ride on every series it produces (the shard adds their names to the bot families),
        // those made now and those made on first use below.
        let base = Labels(
            [("game", spec.gameName), ("persona", spec.name)]
                + spec.tags.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        self.base = base
        let kinds = plan.description.packetKinds
        packetKinds = kinds
        // Only the kinds this persona's client can send or receive exist from the start (at 0); anything else (a
        // rogue's wrong-direction packet) gets its series the first time it happens.
        packetsSent = kinds.indices.map { index in
            kinds[index].direction != .fromServer && plan.expectsKind(index)
                ? shard.counter(SkirmishMetrics.packetsSent, Meters.sentLabels(kinds[index], base)) : nil
        }
        packetsReceived = kinds.indices.map { index in
            kinds[index].direction != .toServer && plan.expectsKind(index)
                ? shard.counter(SkirmishMetrics.packetsReceived, base.adding(["type": kinds[index].name])) : nil
        }
        packetBytesSent = Array(repeating: nil, count: kinds.count)
        packetBytesReceived = Array(repeating: nil, count: kinds.count)
        events = plan.description.events.map {
            shard.counter(SkirmishMetrics.protocolEvents, base.adding(["event": $0]))
        }
        bytesSent = shard.counter(SkirmishMetrics.bytesSent, base)
        bytesReceived = shard.counter(SkirmishMetrics.bytesReceived, base)
        packetsLost = shard.counter(SkirmishMetrics.packetsLost, base, visibleAtZero: figures.contains(.loss))
        resends = shard.counter(SkirmishMetrics.reliableResends, base, visibleAtZero: figures.contains(.resends))
        mispredictions = shard.counter(
            SkirmishMetrics.mispredictions, base, visibleAtZero: figures.contains(.prediction))
        matchesStarted = shard.counter(SkirmishMetrics.matchesStarted, base, visibleAtZero: figures.contains(.matches))
        matchesCompleted = shard.counter(
            SkirmishMetrics.matchesCompleted, base, visibleAtZero: figures.contains(.matches))
        reconnects = shard.counter(SkirmishMetrics.reconnects, base)
        handshakes = shard.counter(SkirmishMetrics.handshakes, base.adding(["outcome": "ok"]))
        handshakeFailures = shard.counter(SkirmishMetrics.handshakes, base.adding(["outcome": "failed"]))
        let timing = figures.contains(.tickLateness)
        inputsSent = shard.counter(SkirmishMetrics.inputs, base.adding(["timing": "on_time"]), visibleAtZero: timing)
        inputsLate = shard.counter(SkirmishMetrics.inputs, base.adding(["timing": "late"]), visibleAtZero: timing)
        let probes = figures.contains(.roundTrip)
        pingsSent = shard.counter(SkirmishMetrics.pings, base.adding(["direction": "sent"]), visibleAtZero: probes)
        pongsReceived = shard.counter(
            SkirmishMetrics.pings, base.adding(["direction": "answered"]), visibleAtZero: probes)
        botsConnected = shard.gauge(SkirmishMetrics.botsConnected, base)
        rtt = shard.histogram(SkirmishMetrics.rtt, base, visibleAtZero: probes)
        requestRTT = shard.histogram(
            SkirmishMetrics.requestRTT, base, visibleAtZero: figures.contains(.requestRoundTrip))
        snapshotAge = shard.histogram(
            SkirmishMetrics.snapshotAge, base, visibleAtZero: figures.contains(.snapshotAge))
        snapshotInterval = shard.histogram(
            SkirmishMetrics.snapshotInterval, base, visibleAtZero: figures.contains(.snapshotInterval))
        tickLateness = shard.histogram(SkirmishMetrics.tickLateness, base, visibleAtZero: timing)
        handshake = shard.histogram(SkirmishMetrics.handshake, base)
        reconnect = shard.histogram(SkirmishMetrics.reconnect, base)
        predictionError = shard.histogram(
            SkirmishMetrics.predictionError, base, visibleAtZero: figures.contains(.prediction))
        desyncDetection = shard.histogram(
            SkirmishMetrics.desyncDetection, base, visibleAtZero: figures.contains(.desyncs))
        bytesSentPerSecond = shard.histogram(SkirmishMetrics.botBytesPerSecond, base.adding(["direction": "sent"]))
        bytesReceivedPerSecond = shard.histogram(
            SkirmishMetrics.botBytesPerSecond, base.adding(["direction": "received"]))
        // Dashboards and alerts on desyncs and errors need these series at 0 on a clean run ("No data" reads as
        // "not measured"), so the parts this persona's replica or protocol checks and the error kinds any bot of its
        // protocol can meet exist from the first push.
        if figures.contains(.desyncs) {
            for part in plan.description.desyncParts + plan.behavior.desyncParts where desyncs[part] == nil {
                desyncs[part] = shard.counter(SkirmishMetrics.desyncs, base.adding(["part": part]))
            }
        }
        for kind in CloseReason.runtimeKinds + plan.description.errorKinds where errors[kind] == nil {
            errors[kind] = shard.counter(SkirmishMetrics.errors, base.adding(["kind": kind]))
        }
        // The checks every bot of this persona makes exist at 0 from the first push, like the desync parts.
        if spec.isLegit {
            for name in plan.description.checks + plan.behavior.checks where checks[name] == nil {
                let labels = base.adding(["check": name])
                let ids = (
                    judged: shard.counter(SkirmishMetrics.checks, labels),
                    failed: shard.counter(SkirmishMetrics.checksFailed, labels)
                )
                checks[name] = ids
                if let builtIn = ReplyCheck.allCases.first(where: { $0.name == name }) {
                    builtInChecks[builtIn.rawValue] = ids
                }
            }
        }
    }

    private static func sentLabels(_ kind: PacketKind, _ base: Labels) -> Labels {
        base.adding(["type": kind.name, "delivery": kind.delivery])
    }

    /// Records a latency or error sample; rogue personas record none, so their traffic never colours the legitimate
    /// distributions.
    func record(_ id: HistogramID, seconds: Double) {
        if isLegit { shard.record(id, seconds: seconds) }
    }

    func record(_ id: HistogramID, value: Double) {
        if isLegit { shard.record(id, value: value) }
    }

    /// Counts one desync episode: its series, its detection delay, the run's episode log and its warning line (one
    /// per episode for the run's first ``DesyncEpisodeLog/capacity``, rate-limited per part after that).
    func desync(
        _ desync: Desync, since: UInt32? = nil, detectionSeconds: Double?, bot: Int, match: UInt32, rttSeconds: Double
    ) {
        if desyncs[desync.part] == nil {
            desyncs[desync.part] = shard.counter(SkirmishMetrics.desyncs, base.adding(["part": desync.part]))
        }
        shard.add(desyncs[desync.part]!)
        if let detectionSeconds { record(desyncDetection, seconds: detectionSeconds) }
        let episode = DesyncEpisode(
            bot: bot, persona: persona, game: spec.gameName, match: match, part: desync.part, tick: desync.tick,
            since: since, detectionSeconds: detectionSeconds, rttSeconds: rttSeconds, expected: desync.expected,
            observed: desync.observed)
        guard let line = episodes.record(episode, keep: isLegit) else { return }
        var metadata: Logger.Metadata = [
            "bot.id": "\(episode.bot)", "match.id": "\(episode.match)",
            "tick": "\(episode.tick.map { "\($0)" } ?? "none")", "part": "\(episode.part)",
        ]
        if let since = episode.since { metadata["since.tick"] = "\(since)" }
        if !episode.expected.isEmpty || !episode.observed.isEmpty {
            metadata["expected"] = "\(episode.expected)"
            metadata["observed"] = "\(episode.observed)"
        }
        if let delay = episode.detectionSeconds { metadata["detection.seconds"] = "\(delay)" }
        metadata["rtt.seconds"] = "\(episode.rttSeconds)"
        if line.limited {
            // Past the run's first episodes: this line also stands for those of its part since the previous one.
            metadata["count"] = "\(line.count)"
            metadata["suppressed"] = "\(line.count - 1)"
        }
        logger.warning("desync: the replica disagrees with the server", metadata: metadata)
    }

    /// The most distinct error kinds one persona keeps series for; further kinds are counted as `other`, so a
    /// protocol that names errors from what a server sent cannot mint series without bound.
    static let maxErrorKinds = 64

    /// Counts one error of `kind` (handshake_timeout, rejected_server_full, transport, …).
    func error(_ kind: String) {
        if let id = errors[kind] { return shard.add(id) }
        let label = errors.count < Self.maxErrorKinds ? kind : "other"
        if errors[label] == nil {
            errors[label] = shard.counter(SkirmishMetrics.errors, base.adding(["kind": label]))
        }
        shard.add(errors[label]!)
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
                let labels = base.adding(["check": label])
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
            rogue[kind] = shard.counter(SkirmishMetrics.roguePackets, base.adding(["kind": kind]))
        }
        shard.add(rogue[kind]!)
    }

    /// Counts `count` occurrences of the protocol's event number `index`.
    func event(_ index: Int, count: Int) {
        guard index >= 0, index < events.count else { return }
        shard.add(events[index], UInt64(max(count, 0)))
    }
}

/// Per-packet counts, as a bot's traffic passes.
extension Meters {
    /// One packet of protocol kind `kind` sent; `bytes` is its share of the datagram.
    func sent(kind: Int, bytes: Int) {
        guard kind >= 0, kind < packetKinds.count else { return }
        if packetsSent[kind] == nil {
            packetsSent[kind] = shard.counter(SkirmishMetrics.packetsSent, Meters.sentLabels(packetKinds[kind], base))
        }
        shard.add(packetsSent[kind]!)
        if packetBytesSent[kind] == nil {
            packetBytesSent[kind] = shard.counter(
                SkirmishMetrics.packetBytesSent, base.adding(["type": packetKinds[kind].name]))
        }
        shard.add(packetBytesSent[kind]!, UInt64(max(bytes, 0)))
    }

    /// One packet of protocol kind `kind` received.
    func received(kind: Int, bytes: Int) {
        guard kind >= 0, kind < packetKinds.count else { return }
        if packetsReceived[kind] == nil {
            packetsReceived[kind] = shard.counter(
                SkirmishMetrics.packetsReceived, base.adding(["type": packetKinds[kind].name]))
        }
        shard.add(packetsReceived[kind]!)
        if packetBytesReceived[kind] == nil {
            packetBytesReceived[kind] = shard.counter(
                SkirmishMetrics.packetBytesReceived, base.adding(["type": packetKinds[kind].name]))
        }
        shard.add(packetBytesReceived[kind]!, UInt64(max(bytes, 0)))
    }

    func resent(_ count: Int) {
        shard.add(resends, UInt64(max(count, 0)))
    }

    func lost(_ count: Int) {
        shard.add(packetsLost, UInt64(max(count, 0)))
    }
}

/// What a behaviour measures besides its protocol, so those series exist at 0 for its personas: the figures (input
/// timing, snapshot age, predictions, matches), the parts its replica's desyncs name and the checks it makes.
public struct BehaviorSeries: Sendable, Hashable {
    /// The figures it reports.
    public var figures: Figures
    /// The parts its desyncs name.
    public var desyncParts: [String]
    /// The checks it judges.
    public var checks: [String]

    /// What a behaviour reports; nothing by default.
    public init(figures: Figures = [], desyncParts: [String] = [], checks: [String] = []) {
        self.figures = figures
        self.desyncParts = desyncParts
        self.checks = checks
    }
}
