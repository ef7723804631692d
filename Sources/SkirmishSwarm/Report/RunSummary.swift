import Foundation
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire

/// Everything a run measured, as written to `summary.json` and printed as the end-of-run table.
///
/// Latencies are in seconds, prediction errors in pixels. Figures cover the legitimate personas only: a rogue
/// persona's own traffic appears under ``rogue`` and nowhere else. The fields are documented in the SkirmishSwarm
/// DocC catalogue ("The run summary").
public struct RunSummary: Codable, Sendable {
    public struct Percentiles: Codable, Sendable, Hashable {
        public var count: UInt64
        public var p50: Double?
        public var p95: Double?
        public var p99: Double?
        public var max: Double?
    }

    public struct Settings: Codable, Sendable, Hashable {
        public var script: String
        public var scriptPath: String
        public var target: String
        public var shard: String
        public var seed: UInt64
        public var loops: Int
        public var plannedSeconds: Double
    }

    public struct Handshakes: Codable, Sendable, Hashable {
        public var succeeded: UInt64
        public var failed: UInt64
        public var failureRate: Double
    }

    public struct Packets: Codable, Sendable, Hashable {
        public var sent: UInt64
        public var received: UInt64
        public var bytesSent: UInt64
        public var bytesReceived: UInt64
        public var lost: UInt64
        public var resends: UInt64
        public var sentByType: [String: UInt64]
        public var receivedByType: [String: UInt64]
    }

    public struct Latency: Codable, Sendable, Hashable {
        public var rtt: Percentiles
        public var snapshotAge: Percentiles
        public var tickLateness: Percentiles
        public var handshake: Percentiles
        public var reconnect: Percentiles
    }

    public struct Game: Codable, Sendable, Hashable {
        public var matchesStarted: UInt64
        public var matchesCompleted: UInt64
        public var desyncs: UInt64
        public var desyncsByPart: [String: UInt64]
    }

    public struct Persona: Codable, Sendable, Hashable {
        public var name: String
        public var game: String
        public var behavior: String
        public var peakBots: Int
        public var matchesCompleted: UInt64
        public var packetsPerSecond: Double
        public var rtt: Percentiles
        public var snapshotAgeP99: Double?
        public var tickLatenessP99: Double?
        public var desyncs: UInt64
        public var errors: UInt64
    }

    public struct Verdict: Codable, Sendable, Hashable {
        public var name: String
        public var expression: String
        public var value: Double?
        public var passed: Bool
    }

    public struct Exporter: Codable, Sendable, Hashable {
        public var pushes: UInt64
        public var failures: UInt64
        /// Failures by `<target> <reason>` (`vm@127.0.0.1:8428 connect`).
        public var failuresByReason: [String: UInt64]
        public var lastError: String?
    }

    public var run: String
    public var settings: Settings
    public var startedAt: String
    public var durationSeconds: Double
    public var interrupted: Bool
    public var peakBots: Int
    public var handshakes: Handshakes
    public var packets: Packets
    public var latency: Latency
    public var predictionErrorPixels: Percentiles
    public var desyncs: UInt64
    public var desyncsByGame: [String: UInt64]
    public var mispredictions: UInt64
    public var reconnects: UInt64
    public var matchesStarted: UInt64
    public var matchesCompleted: UInt64
    public var onTimeSendRate: Double?
    public var replyRate: Double?
    public var errors: [String: UInt64]
    public var rogue: [String: UInt64]
    public var games: [String: Game]
    public var personas: [Persona]
    public var thresholds: [Verdict]
    public var exporter: Exporter?
    /// The CPU share of one core the busiest bot event loop used over the run (0…1).
    public var generatorBusy: Double?
    /// Set when the generator itself limited the figures (tick lateness p99 over 5 ms, or the process was CPU-bound).
    public var generatorWarning: String?
    public var passed: Bool
    /// The run's figures over time, so `skirmish report summary.json` can rebuild `report.html`.
    public var timeline: RunTimeline?
    /// A soak's health checks, resources and collector outages (`skirmish soak` only).
    public var soak: SoakReport?
    /// Every latency and error distribution in full (HDR counts and export buckets), by metric family name, so the
    /// summaries of a sharded run's processes merge into the run's exact percentiles.
    public var histograms: [String: HistogramValue]?
    /// The embedded server's own figures at the end (`nil` against an external `--target`).
    public var server: ServerFigures?
}

extension RunSummary {
    /// Builds the summary of a finished run from its merged metrics.
    public init(
        outcome: SwarmOutcome, configuration: SwarmConfiguration, scriptPath: String, startedAt: Date,
        exporter: ExporterStats?, cpuSeconds: Double? = nil
    ) {
        let script = configuration.script
        let reader = SnapshotReader(
            snapshot: outcome.snapshot,
            legit: script.personas.filter(\.isLegit).map(\.name))
        let seconds = max(outcome.elapsed.seconds, 0.001)
        run = configuration.runID
        settings = Settings(
            script: script.name, scriptPath: scriptPath, target: configuration.target.description,
            shard: configuration.plan.shard.fraction, seed: configuration.seed, loops: configuration.loops,
            plannedSeconds: configuration.plan.duration.seconds)
        self.startedAt = ISO8601DateFormatter().string(from: startedAt)
        durationSeconds = seconds
        interrupted = outcome.interrupted
        peakBots = outcome.peakBots
        timeline = outcome.timeline

        let ok = reader.total(SkirmishMetrics.handshakes, where: ["outcome": "ok"])
        let failed = reader.total(SkirmishMetrics.handshakes, where: ["outcome": "failed"])
        handshakes = Handshakes(
            succeeded: ok, failed: failed, failureRate: ok + failed == 0 ? 0 : Double(failed) / Double(ok + failed))
        packets = Packets(
            sent: reader.total(SkirmishMetrics.packetsSent), received: reader.total(SkirmishMetrics.packetsReceived),
            bytesSent: reader.total(SkirmishMetrics.bytesSent),
            bytesReceived: reader.total(SkirmishMetrics.bytesReceived),
            lost: reader.total(SkirmishMetrics.packetsLost), resends: reader.total(SkirmishMetrics.reliableResends),
            sentByType: reader.breakdown(SkirmishMetrics.packetsSent, by: "type"),
            receivedByType: reader.breakdown(SkirmishMetrics.packetsReceived, by: "type"))
        latency = Latency(
            rtt: reader.percentiles(SkirmishMetrics.rtt), snapshotAge: reader.percentiles(SkirmishMetrics.snapshotAge),
            tickLateness: reader.percentiles(SkirmishMetrics.tickLateness),
            handshake: reader.percentiles(SkirmishMetrics.handshake),
            reconnect: reader.percentiles(SkirmishMetrics.reconnect))
        predictionErrorPixels = reader.percentiles(SkirmishMetrics.predictionError)
        let distributions = [
            SkirmishMetrics.rtt, SkirmishMetrics.snapshotAge, SkirmishMetrics.tickLateness, SkirmishMetrics.handshake,
            SkirmishMetrics.reconnect, SkirmishMetrics.predictionError,
        ]
        histograms = Dictionary(
            uniqueKeysWithValues: distributions.compactMap { family in
                reader.snapshot.histogram(family).map { (family.name, $0) }
            })
        desyncs = reader.total(SkirmishMetrics.desyncs)
        desyncsByGame = reader.breakdown(SkirmishMetrics.desyncs, by: "game")
        mispredictions = reader.total(SkirmishMetrics.mispredictions)
        reconnects = reader.total(SkirmishMetrics.reconnects)
        matchesStarted = reader.total(SkirmishMetrics.matchesStarted)
        matchesCompleted = reader.total(SkirmishMetrics.matchesCompleted)
        let onTime = reader.total(SkirmishMetrics.inputs, where: ["timing": "on_time"])
        let late = reader.total(SkirmishMetrics.inputs, where: ["timing": "late"])
        onTimeSendRate = onTime + late == 0 ? nil : Double(onTime) / Double(onTime + late)
        let pings = reader.total(SkirmishMetrics.pings, where: ["direction": "sent"])
        let pongs = reader.total(SkirmishMetrics.pings, where: ["direction": "answered"])
        replyRate = pings == 0 ? nil : min(1, Double(pongs) / Double(pings))
        errors = reader.breakdown(SkirmishMetrics.errors, by: "kind")
        rogue = SnapshotReader(snapshot: outcome.snapshot, legit: nil).breakdown(
            SkirmishMetrics.roguePackets, by: "kind")

        var games: [String: Game] = [:]
        for game in Set(script.personas.filter(\.isLegit).map(\.game.description)) {
            let only = ["game": game]
            games[game] = Game(
                matchesStarted: reader.total(SkirmishMetrics.matchesStarted, where: only),
                matchesCompleted: reader.total(SkirmishMetrics.matchesCompleted, where: only),
                desyncs: reader.total(SkirmishMetrics.desyncs, where: only),
                desyncsByPart: reader.breakdown(SkirmishMetrics.desyncs, by: "part", where: only))
        }
        self.games = games

        let table = PersonaTable(script.personas)
        var peaks = [Int](repeating: 0, count: script.personas.count)
        for number in 0..<outcome.peakBots { peaks[table.index(for: number)] += 1 }
        personas = script.personas.enumerated().map { index, persona in
            let only = ["persona": persona.name]
            let all = SnapshotReader(snapshot: outcome.snapshot, legit: nil)
            return Persona(
                name: persona.name, game: persona.game.description, behavior: persona.behavior.rawValue,
                peakBots: peaks[index],
                matchesCompleted: all.total(SkirmishMetrics.matchesCompleted, where: only),
                packetsPerSecond: Double(all.total(SkirmishMetrics.packetsSent, where: only)) / seconds,
                rtt: all.percentiles(SkirmishMetrics.rtt, where: only),
                snapshotAgeP99: all.quantile(SkirmishMetrics.snapshotAge, 0.99, where: only),
                tickLatenessP99: all.quantile(SkirmishMetrics.tickLateness, 0.99, where: only),
                desyncs: all.total(SkirmishMetrics.desyncs, where: only),
                errors: all.total(SkirmishMetrics.errors, where: only))
        }
        self.exporter = exporter.map {
            Exporter(
                pushes: UInt64($0.pushes), failures: UInt64($0.totalFailures),
                failuresByReason: Dictionary(
                    $0.failures.map { ("\($0.key.target) \($0.key.reason)", UInt64($0.value)) }, uniquingKeysWith: +),
                lastError: $0.lastError)
        }

        var warning: String?
        if let lateness = latency.tickLateness.p99, lateness > 0.005 {
            warning = String(
                format: "tick lateness p99 was %.1f ms (over 5 ms): the generator could not keep its schedule, so "
                    + "these figures describe the generator, not the server. Run fewer bots per core or more shards.",
                lateness * 1_000)
        } else if let busy = outcome.busiestLoop, busy > 0.9 {
            warning = String(
                format: "a bot event loop was busy %.0f%% of the run (CPU-bound): these figures may describe the "
                    + "generator, not the server. Run fewer bots per core or more shards.",
                busy * 100)
        } else if let cpuSeconds, cpuSeconds / (seconds * Double(max(configuration.loops, 1))) > 0.9 {
            warning =
                "the process was CPU-bound for most of the run: these figures may describe the generator, not the "
                + "server. Run fewer bots per core or more shards."
        }
        generatorBusy = outcome.busiestLoop
        generatorWarning = warning
        thresholds = []
        passed = true
        thresholds = script.thresholds.map { threshold in
            let value = self.value(of: threshold.metric, reader: reader)
            return Verdict(
                name: threshold.metric.name, expression: threshold.description, value: value,
                passed: value.map { threshold.comparison.holds($0, threshold.limit) } ?? false)
        }
        passed = thresholds.allSatisfy(\.passed)
    }

    /// The figure a threshold is judged on; `nil` when the run produced no sample for it (which fails it).
    func value(of metric: ThresholdMetric, reader: SnapshotReader) -> Double? {
        switch metric {
        case .percentile(let histogram, let quantile):
            let family: MetricFamily =
                switch histogram {
                case .rtt: SkirmishMetrics.rtt
                case .snapshotAge: SkirmishMetrics.snapshotAge
                case .tickLateness: SkirmishMetrics.tickLateness
                case .handshake: SkirmishMetrics.handshake
                case .reconnect: SkirmishMetrics.reconnect
                case .predictionError: SkirmishMetrics.predictionError
                }
            return reader.quantile(family, quantile)
        case .count(let count):
            let value: UInt64 =
                switch count {
                case .desyncs: desyncs
                case .mispredictions: mispredictions
                case .errors: errors.values.reduce(0, +)
                case .reconnects: reconnects
                case .packetsLost: packets.lost
                case .resends: packets.resends
                case .matchesStarted: matchesStarted
                case .matchesCompleted: matchesCompleted
                case .handshakeFailures: handshakes.failed
                case .exporterFailures: exporter?.failures ?? 0
                }
            return Double(value)
        case .rate(let rate):
            switch rate {
            case .handshakeFailureRate: return handshakes.failureRate
            case .packetLossRate:
                return packets.received == 0 ? 0 : Double(packets.lost) / Double(packets.received + packets.lost)
            case .errorRate:
                let attempts = handshakes.succeeded + handshakes.failed
                return attempts == 0 ? 0 : Double(errors.values.reduce(0, +)) / Double(attempts)
            case .onTimeSendRate: return onTimeSendRate
            case .replyRate: return replyRate
            }
        }
    }
}
