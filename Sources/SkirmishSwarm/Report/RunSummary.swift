import Foundation
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// Everything a run measured, as written to `summary.json` and printed as the end-of-run table.
///
/// Latencies are in seconds, prediction errors in pixels. Figures cover the legitimate personas only: a rogue
/// persona's own traffic appears under ``rogue`` and nowhere else. A figure the run's protocol and behaviours do not
/// measure (round trips of a protocol without pings, snapshot age of one without server ticks) is `nil`, written as
/// `null`, never 0: each persona's ``Persona/figures`` lists what it measured. The fields are documented in the
/// SkirmishSwarm DocC catalogue ("The run summary").
public struct RunSummary: Codable, Sendable {
    /// A distribution's sample count and percentiles, in its field's unit (seconds unless the name says otherwise).
    public struct Percentiles: Codable, Sendable, Hashable {
        /// Samples recorded; the percentiles are `nil` when it is 0.
        public var count: UInt64
        /// The median.
        public var p50: Double?
        /// The 95th percentile.
        public var p95: Double?
        /// The 99th percentile.
        public var p99: Double?
        /// The largest sample.
        public var max: Double?
    }

    /// What the run was asked to do.
    public struct Settings: Codable, Sendable, Hashable {
        /// The script's `name`.
        public var script: String
        /// The script file as given on the command line.
        public var scriptPath: String
        /// The script's ``SkirmishScript/Script/digest``: runs with the same digest ran the same script text
        /// (variables aside); `nil` in summaries written before 0.22 or for a script a program built.
        public var scriptDigest: String?
        /// The server the bots connected to, as `transport://host:port`.
        public var target: String
        /// This process's shard of the run, `i/n` (`1/1` when unsharded).
        public var shard: String
        /// The seed of every random choice (personas, think times, link emulation), so a run can be repeated.
        public var seed: UInt64
        /// Client event loops (I/O threads) the bots ran on.
        public var loops: Int
        /// The plan's length in seconds (profile stages summed).
        public var plannedSeconds: Double
        /// The variables the script read (`${NAME}`) that were set, by name; their values are never written (a
        /// script may read a secret). Absent when it read none.
        public var variables: [String]? = nil
        /// The script's ``SkirmishScript/Script/variablesDigest``: runs with the same digest read the same values,
        /// which is how `skirmish merge` tells that shards read one script alike.
        public var variablesDigest: String? = nil
    }

    /// Handshakes that ended in a `Welcome` and those that did not.
    public struct Handshakes: Codable, Sendable, Hashable {
        /// Handshakes that got a `Welcome`.
        public var succeeded: UInt64
        /// Handshakes that timed out or were rejected.
        public var failed: UInt64
        /// `failed / (succeeded + failed)`, 0…1; 0 when there was no handshake.
        public var failureRate: Double
    }

    /// Packet and byte totals of the legitimate personas' bots, both ways.
    public struct Packets: Codable, Sendable, Hashable {
        /// Packets the bots sent.
        public var sent: UInt64
        /// Packets the bots received and decoded.
        public var received: UInt64
        /// Bytes the bots sent.
        public var bytesSent: UInt64
        /// Bytes the bots received.
        public var bytesReceived: UInt64
        /// Unreliable packets the server sent that never arrived (gaps in their numbering); `nil` when the protocol
        /// cannot tell.
        @Measured public var lost: UInt64?
        /// Reliable packets sent again because their acknowledgement did not arrive in time; `nil` when the protocol
        /// does not resend.
        @Measured public var resends: UInt64?
        /// Packets sent, by message type name (`PaddleState`).
        public var sentByType: [String: UInt64]
        /// Packets received, by message type name (`TableSnapshot`).
        public var receivedByType: [String: UInt64]
        /// Bytes sent, by message type name: each packet's share of its datagram, as the protocol counts it (absent
        /// in summaries written before 0.18).
        public var bytesSentByType: [String: UInt64]?
        /// Bytes received, by message type name (absent in summaries written before 0.18).
        public var bytesReceivedByType: [String: UInt64]?
    }

    /// The run's latency distributions, each in seconds; `nil` for one no persona measured.
    public struct Latency: Codable, Sendable, Hashable {
        /// Round trip of the protocol's own ping (SNAP's Ping/Pong, once a second per bot).
        @Measured public var rtt: Percentiles?
        /// Receive time minus the server's (estimated) time for the snapshot's tick.
        @Measured public var snapshotAge: Percentiles?
        /// How late the loop sent each scheduled input compared with its fixed send time.
        @Measured public var tickLateness: Percentiles?
        /// From the first handshake packet to the connection being established (SNAP: `Hello` to `Welcome`).
        @Measured public var handshake: Percentiles?
        /// From a dropped connection to the `Welcome` of its resume.
        @Measured public var reconnect: Percentiles?
        /// Time between consecutive snapshots as a bot received them (absent in summaries written before it was
        /// kept).
        @Measured public var snapshotInterval: Percentiles? = nil
        /// From a behaviour's request to the reply that names it (an echoed sequence number); `nil` when no
        /// behaviour of the run measures it.
        @Measured public var requestRTT: Percentiles? = nil
    }

    /// One game's totals over the personas that play it.
    public struct Game: Codable, Sendable, Hashable {
        /// Matches that reached play; `nil` when its behaviours do not count matches.
        @Measured public var matchesStarted: UInt64?
        /// Matches that ran to their end; `nil` when its behaviours do not count matches.
        @Measured public var matchesCompleted: UInt64?
        /// Desync episodes: runs of failed replica checks, each counted once; `nil` when nothing checks the state.
        @Measured public var desyncs: UInt64?
        /// Desync episodes by the part that diverged (`puck`, `paddles`, `score`, `deck`, `piles`, …).
        public var desyncsByPart: [String: UInt64]
    }

    /// One persona's figures.
    public struct Persona: Codable, Sendable, Hashable {
        /// The persona's `name` in the script.
        public var name: String
        /// The scenario it belongs to; `nil` for a script without `scenarios`.
        public var scenario: String? = nil
        /// The game it plays (`puck`, `snap`, `suns`).
        public var game: String
        /// The behaviour its bots run (`chaser`, `snap-player`, or a registered behaviour's name).
        public var behavior: String
        /// The figures its bots measured (`rtt`, `resends`, `loss`, `handshake`, `snapshot_age`,
        /// `snapshot_interval`, `tick_lateness`, `prediction`, `desyncs`, `matches`, `checks`): what its protocol
        /// and behaviour measure, as its series show. Its other figures are `null`. Absent in older summaries.
        public var figures: [String]? = nil
        /// The most bots of this persona connected at once.
        public var peakBots: Int
        /// Matches its bots ran to their end; `nil` when its behaviour does not count matches.
        @Measured public var matchesCompleted: UInt64?
        /// Packets its bots sent per second of the run, all bots together.
        public var packetsPerSecond: Double
        /// Its bots' round-trip percentiles, in seconds; `nil` when its protocol has no round trip.
        @Measured public var rtt: Percentiles?
        /// Its bots' 99th-percentile snapshot age, in seconds; `nil` when not measured or no snapshot arrived.
        @Measured public var snapshotAgeP99: Double?
        /// Its bots' 99th-percentile tick lateness, in seconds; `nil` when not measured or no input was scheduled.
        @Measured public var tickLatenessP99: Double?
        /// Desync episodes of its bots; `nil` when nothing checks their state.
        @Measured public var desyncs: UInt64?
        /// Errors of its bots, all kinds together.
        public var errors: UInt64
        /// One connected bot's bytes per second each way (`skirmish_bot_bytes_per_second`).
        public var bytesPerSecond: TrafficFigures?
    }

    /// One threshold and whether it held.
    public struct Verdict: Codable, Sendable, Hashable {
        /// The figure the threshold names (`rtt_p99`).
        public var name: String
        /// The threshold as written, figure and limit (`rtt_p99 < 50ms`).
        public var expression: String
        /// The figure judged: the whole run's, or for a windowed threshold the worst window's.
        public var value: Double?
        /// Whether the threshold held; a threshold without a measured value fails.
        public var passed: Bool
        /// `false` when no persona of the run measures the threshold's figure (a `desyncs` threshold on a protocol
        /// nothing checks): the threshold then fails, since nothing was judged. Absent in older summaries.
        public var measured: Bool? = nil
        /// The figure the threshold reads when not every protocol measures it (`rtt`, `desyncs`, `loss`, …, as in a
        /// persona's `figures`); `nil` for figures every run has (errors, handshake outcomes) and in older summaries.
        public var figure: String? = nil
        /// A windowed threshold's length in seconds (`nil`: judged over the whole run).
        public var windowSeconds: Double? = nil
        /// Windows judged and windows failed (windowed thresholds only).
        public var windowsJudged: Int? = nil
        /// Windows in which the threshold did not hold (windowed thresholds only).
        public var windowsFailed: Int? = nil
        /// The first window that failed.
        public var firstFailingWindow: ThresholdJudge.Breach? = nil
        /// The labels the figure was read from (`{"persona": "chaser"}`); `nil` for every legitimate persona's.
        public var filter: [String: String]? = nil
    }

    /// How often each check held: `skirmish_checks_total` and `skirmish_checks_failed_total` by check.
    public struct Check: Codable, Sendable, Hashable {
        /// Replies the check judged.
        public var judged: UInt64
        /// Replies that broke its rule.
        public var failed: UInt64
    }

    /// What the metrics exporter did during the run (`--push` only).
    public struct Exporter: Codable, Sendable, Hashable {
        /// Pushes that reached every collector.
        public var pushes: UInt64
        /// Pushes that failed, all reasons together.
        public var failures: UInt64
        /// Failures by `<target> <reason>` (`vm@127.0.0.1:8428 connect`).
        public var failuresByReason: [String: UInt64]
        /// The most recent failure's message; `nil` when none failed.
        public var lastError: String?
    }

    /// The run id (`<script>-<UTC time>-<hex>`), also the `run` label of every series.
    public var run: String
    /// The protocol every persona spoke (the script's `protocol:`, `snap` by default); absent in older summaries.
    public var `protocol`: String? = nil
    /// What the run was asked to do: script, target, shard, seed, loops and planned length.
    public var settings: Settings
    /// When the run started, as ISO 8601 UTC.
    public var startedAt: String
    /// How long the run lasted, in seconds.
    public var durationSeconds: Double
    /// Whether a signal stopped the run before its plan ended.
    public var interrupted: Bool
    /// The most concurrent bots the plan asked of this shard.
    public var peakBots: Int
    /// Handshakes that succeeded and failed.
    public var handshakes: Handshakes
    /// Packets and bytes, in total and by type.
    public var packets: Packets
    /// Round trip, snapshot age, tick lateness, handshake and reconnect times.
    public var latency: Latency
    /// How far the puck predicted from the previous snapshot was from the authoritative one, in pixels; `nil` when
    /// no behaviour predicts.
    @Measured public var predictionErrorPixels: Percentiles?
    /// Desync episodes in total; `nil` when nothing checked the state.
    @Measured public var desyncs: UInt64?
    /// Desync episodes by game.
    public var desyncsByGame: [String: UInt64]
    /// The run's first desync episodes in full (at most 100): bot, match, first divergent tick, part, detection
    /// delay, expected and observed values (absent in older summaries).
    public var desyncEpisodes: [DesyncEpisode]?
    /// Snapshots whose puck was more than 2 pixels from where the previous snapshot predicted it; `nil` when no
    /// behaviour predicts.
    @Measured public var mispredictions: UInt64?
    /// Resumes after a dropped connection.
    public var reconnects: UInt64
    /// Matches that reached play, all games; `nil` when no behaviour counts matches.
    @Measured public var matchesStarted: UInt64?
    /// Matches that ran to their end, all games; `nil` when no behaviour counts matches.
    @Measured public var matchesCompleted: UInt64?
    /// Share of scheduled inputs sent within 5 ms of their send time (0…1); `nil` without scheduled inputs.
    public var onTimeSendRate: Double?
    /// Share of the bots' pings that were answered (0…1); `nil` when none was sent.
    public var replyRate: Double?
    /// Errors by kind (`handshake_timeout`, `rejected_<reason>`, `silence_timeout`, `resume_failed`, …).
    public var errors: [String: UInt64]
    /// The protocol plug-in's own events by name, those that happened (ENet: `fragments_sent`,
    /// `throttle_changes`, …); absent in summaries written before 0.18.
    public var protocolEvents: [String: UInt64]?
    /// Hostile packets the rogue personas sent, by kind; counted nowhere else.
    public var rogue: [String: UInt64]
    /// Per-game totals, by game name.
    public var games: [String: Game]
    /// Per-persona figures, in script order.
    public var personas: [Persona]
    /// Every threshold's verdict, in script order.
    public var thresholds: [Verdict]
    /// Set when a threshold with `abort_on_fail` stopped the run early.
    public var aborted: ThresholdJudge.Breach?
    /// Every check by name, with the replies it judged and those that failed it.
    public var checks: [String: Check]?
    /// The exporter's pushes and failures; `nil` when the run pushed nowhere.
    public var exporter: Exporter?
    /// The CPU share of one core the busiest bot event loop used over the run (0…1).
    public var generatorBusy: Double?
    /// Set when the generator itself limited the figures (tick lateness p99 over 5 ms, or the process was CPU-bound).
    public var generatorWarning: String?
    /// Whether every threshold held and no threshold aborted the run; `skirmish swarm` exits 99 otherwise.
    public var passed: Bool
    /// The run's figures over time, so `skirmish report summary.json` can rebuild `report.html`.
    public var timeline: RunTimeline?
    /// A soak's health checks, resources and collector outages (`skirmish soak` only).
    public var soak: SoakReport?
    /// Every latency and error distribution in full (HDR counts and export buckets), by metric family name, so the
    /// summaries of a sharded run's processes merge into the run's exact percentiles.
    public var histograms: [String: HistogramValue]?
    /// Each persona's figures per block of time, for `skirmish compare` and `--baseline` (absent in summaries
    /// written before 0.17).
    public var samples: RunSamples?
    /// This run compared with the baseline given with `--baseline`.
    public var comparison: Comparison?
    /// The baseline's whole-run figures, drawn on report.html's charts (`nil` without `--baseline`).
    public var baseline: ReportSummary.Baseline?
    /// The embedded server's own figures at the end (`nil` against an external `--target`).
    public var server: ServerFigures?
    /// One connected bot's bytes per second each way, one sample per bot and second
    /// (`skirmish_bot_bytes_per_second`, legitimate personas only).
    public var botBytesPerSecond: TrafficFigures?
    /// The shards a `skirmish merge` summary was built from, by index (`nil` in a process's own summary).
    public var shards: [ShardResult]? = nil
    /// Shard indices a merge was allowed to go without (`--allow-missing`); a run missing one does not pass.
    public var missingShards: [Int]? = nil

    /// One shard of a merged run, as its own summary had it.
    public struct ShardResult: Codable, Sendable, Hashable {
        /// Its `i/n`.
        public var shard: String
        /// The results folder it was read from.
        public var folder: String
        /// Whether its own verdict passed (its thresholds judged on its bots alone).
        public var passed: Bool
        /// A soak shard's health checks (memory, descriptors, stalls); `nil` for a swarm.
        public var healthPassed: Bool?
        /// How long it ran, in seconds.
        public var durationSeconds: Double
        /// The most bots it held at once.
        public var peakBots: Int
    }
}

extension RunSummary {
    /// Builds the summary of a finished run from its merged metrics.
    public init(
        outcome: SwarmOutcome, configuration: SwarmConfiguration, scriptPath: String, startedAt: Date,
        exporter: ExporterStats?, cpuSeconds: Double? = nil
    ) {
        let script = configuration.script
        var outcome = outcome
        if outcome.personaPeaks.count != script.personas.count {
            // An outcome made by hand, without the swarm's own deal: dealt again from the plan.
            let plan = configuration.plan
            let bots =
                plan.scenarios.count == 1
                ? [outcome.peakBots] : plan.scenarios.map { plan.shard.share(of: $0.runPeakClosedBots) }
            outcome.personaPeaks = PersonaDeal(script.personas, plan: plan).peaks(of: bots)
        }
        self.init(
            outcome: outcome, script: script, runID: configuration.runID,
            settings: Settings(
                script: script.name, scriptPath: scriptPath, scriptDigest: script.digest,
                target: configuration.target.description,
                shard: configuration.plan.shard.fraction, seed: configuration.seed, loops: configuration.loops,
                plannedSeconds: configuration.plan.duration.seconds,
                variables: script.variables.isEmpty ? nil : script.variables.keys.sorted(),
                variablesDigest: script.variablesDigest),
            startedAt: ISO8601DateFormatter().string(from: startedAt),
            exporter: exporter.map {
                Exporter(
                    pushes: UInt64($0.pushes), failures: UInt64($0.totalFailures),
                    failuresByReason: Dictionary(
                        $0.failures.map { ("\($0.key.target) \($0.key.reason)", UInt64($0.value)) },
                        uniquingKeysWith: +),
                    lastError: $0.lastError)
            }, cpuSeconds: cpuSeconds)
    }

    /// Builds a summary from a run's metrics and what was asked of it: the one place every figure, verdict and
    /// warning of a summary is computed, for a process's own run and for the shards `skirmish merge` adds up.
    /// `outcome.personaPeaks` holds one peak per persona of `script`.
    init(
        outcome: SwarmOutcome, script: Script, runID: String, settings: Settings, startedAt: String,
        exporter: Exporter?, cpuSeconds: Double?
    ) {
        let reader = SnapshotReader(
            snapshot: outcome.snapshot,
            legit: script.personas.filter(\.isLegit).map(\.name))
        let seconds = max(outcome.elapsed.seconds, 0.001)
        run = runID
        self.protocol = script.protocolName
        self.settings = settings
        self.startedAt = startedAt
        durationSeconds = seconds
        interrupted = outcome.interrupted
        peakBots = outcome.peakBots
        timeline = outcome.timeline
        botBytesPerSecond = TrafficFigures(SkirmishMetrics.botBytesPerSecond, in: outcome.snapshot)

        let ok = reader.total(SkirmishMetrics.handshakes, where: ["outcome": "ok"])
        let failed = reader.total(SkirmishMetrics.handshakes, where: ["outcome": "failed"])
        handshakes = Handshakes(
            succeeded: ok, failed: failed, failureRate: ok + failed == 0 ? 0 : Double(failed) / Double(ok + failed))
        packets = Packets(
            sent: reader.total(SkirmishMetrics.packetsSent), received: reader.total(SkirmishMetrics.packetsReceived),
            bytesSent: reader.total(SkirmishMetrics.bytesSent),
            bytesReceived: reader.total(SkirmishMetrics.bytesReceived),
            lost: reader.total(SkirmishMetrics.packetsLost, of: .loss),
            resends: reader.total(SkirmishMetrics.reliableResends, of: .resends),
            sentByType: reader.breakdown(SkirmishMetrics.packetsSent, by: "type"),
            receivedByType: reader.breakdown(SkirmishMetrics.packetsReceived, by: "type"),
            bytesSentByType: reader.breakdown(SkirmishMetrics.packetBytesSent, by: "type"),
            bytesReceivedByType: reader.breakdown(SkirmishMetrics.packetBytesReceived, by: "type"))
        latency = Latency(
            rtt: reader.measuredPercentiles(SkirmishMetrics.rtt),
            snapshotAge: reader.measuredPercentiles(SkirmishMetrics.snapshotAge),
            tickLateness: reader.measuredPercentiles(SkirmishMetrics.tickLateness),
            handshake: reader.measuredPercentiles(SkirmishMetrics.handshake),
            reconnect: reader.measuredPercentiles(SkirmishMetrics.reconnect),
            snapshotInterval: reader.measuredPercentiles(SkirmishMetrics.snapshotInterval),
            requestRTT: reader.measuredPercentiles(SkirmishMetrics.requestRTT))
        predictionErrorPixels = reader.measuredPercentiles(SkirmishMetrics.predictionError)
        let distributions = [
            SkirmishMetrics.rtt, SkirmishMetrics.snapshotAge, SkirmishMetrics.tickLateness, SkirmishMetrics.handshake,
            SkirmishMetrics.reconnect, SkirmishMetrics.predictionError, SkirmishMetrics.desyncDetection,
            SkirmishMetrics.snapshotInterval, SkirmishMetrics.requestRTT,
        ]
        histograms = Dictionary(
            uniqueKeysWithValues: distributions.compactMap { family in
                guard reader.has(family) else { return nil }
                return reader.snapshot.histogram(family).map { (family.name, $0) }
            })
        desyncs = reader.total(SkirmishMetrics.desyncs, of: .desyncs)
        desyncsByGame = reader.breakdown(SkirmishMetrics.desyncs, by: "game")
        desyncEpisodes = outcome.desyncEpisodes
        mispredictions = reader.total(SkirmishMetrics.mispredictions, of: .prediction)
        reconnects = reader.total(SkirmishMetrics.reconnects)
        matchesStarted = reader.total(SkirmishMetrics.matchesStarted, of: .matches)
        matchesCompleted = reader.total(SkirmishMetrics.matchesCompleted, of: .matches)
        let onTime = reader.total(SkirmishMetrics.inputs, where: ["timing": "on_time"])
        let late = reader.total(SkirmishMetrics.inputs, where: ["timing": "late"])
        onTimeSendRate = onTime + late == 0 ? nil : Double(onTime) / Double(onTime + late)
        let pings = reader.total(SkirmishMetrics.pings, where: ["direction": "sent"])
        let pongs = reader.total(SkirmishMetrics.pings, where: ["direction": "answered"])
        replyRate = pings == 0 ? nil : min(1, Double(pongs) / Double(pings))
        errors = reader.breakdown(SkirmishMetrics.errors, by: "kind")
        protocolEvents = reader.breakdown(SkirmishMetrics.protocolEvents, by: "event")
        rogue = SnapshotReader(snapshot: outcome.snapshot, legit: nil).breakdown(
            SkirmishMetrics.roguePackets, by: "kind")

        var games: [String: Game] = [:]
        for game in Set(script.personas.filter(\.isLegit).map(\.gameName)) {
            let only = ["game": game]
            // A game whose protocol and behaviours count neither matches nor desyncs (ENet's, a user's protocol's)
            // has no entry: its figures are absent, not 0.
            guard
                !reader.snapshot.series(of: SkirmishMetrics.matchesStarted, where: only).isEmpty
                    || !reader.snapshot.series(of: SkirmishMetrics.desyncs, where: only).isEmpty
            else { continue }
            games[game] = Game(
                matchesStarted: reader.total(SkirmishMetrics.matchesStarted, of: .matches, where: only),
                matchesCompleted: reader.total(SkirmishMetrics.matchesCompleted, of: .matches, where: only),
                desyncs: reader.total(SkirmishMetrics.desyncs, of: .desyncs, where: only),
                desyncsByPart: reader.breakdown(SkirmishMetrics.desyncs, by: "part", where: only))
        }
        self.games = games

        let peaks = outcome.personaPeaks
        personas = script.personas.enumerated().map { index, persona in
            let only = ["persona": persona.name]
            let all = SnapshotReader(snapshot: outcome.snapshot, legit: nil)
            return Persona(
                name: persona.name, scenario: script.scenarios.first { $0.personas.contains(index) }?.name,
                game: persona.gameName, behavior: persona.behavior.rawValue,
                figures: all.figures(where: only), peakBots: index < peaks.count ? peaks[index] : 0,
                matchesCompleted: all.total(SkirmishMetrics.matchesCompleted, of: .matches, where: only),
                packetsPerSecond: Double(all.total(SkirmishMetrics.packetsSent, where: only)) / seconds,
                rtt: all.measuredPercentiles(SkirmishMetrics.rtt, where: only),
                snapshotAgeP99: all.quantile(SkirmishMetrics.snapshotAge, 0.99, where: only),
                tickLatenessP99: all.quantile(SkirmishMetrics.tickLateness, 0.99, where: only),
                desyncs: all.total(SkirmishMetrics.desyncs, of: .desyncs, where: only),
                errors: all.total(SkirmishMetrics.errors, where: only),
                bytesPerSecond: TrafficFigures(SkirmishMetrics.botBytesPerSecond, in: outcome.snapshot, where: only))
        }
        self.exporter = exporter

        var warning: String?
        if let lateness = latency.tickLateness?.p99, lateness > 0.005 {
            warning = String(
                format: "tick lateness p99 was %.1f ms (over 5 ms): the generator could not keep its schedule, so "
                    + "these figures describe the generator, not the server. Run fewer bots per core or more shards.",
                lateness * 1_000)
        } else if let busy = outcome.busiestLoop, busy > 0.9 {
            warning = String(
                format: "a bot event loop was busy %.0f%% of the run (CPU-bound): these figures may describe the "
                    + "generator, not the server. Run fewer bots per core or more shards.",
                busy * 100)
        } else if let cpuSeconds, cpuSeconds / (seconds * Double(max(settings.loops, 1))) > 0.9 {
            warning =
                "the process was CPU-bound for most of the run: these figures may describe the generator, not the "
                + "server. Run fewer bots per core or more shards."
        }
        generatorBusy = outcome.busiestLoop
        generatorWarning = warning
        let judged = reader.breakdown(SkirmishMetrics.checks, by: "check")
        let failedChecks = reader.breakdown(SkirmishMetrics.checksFailed, by: "check")
        checks = Dictionary(
            uniqueKeysWithValues: Set(judged.keys).union(failedChecks.keys).map {
                ($0, Check(judged: judged[$0] ?? 0, failed: failedChecks[$0] ?? 0))
            })
        aborted = outcome.aborted
        samples = outcome.samples
        thresholds = []
        passed = true
        let windows = outcome.windows
        thresholds = script.thresholds.enumerated().map { index, threshold in
            let record = index < windows.count ? windows[index] : nil
            let reader = reader.scoped(to: threshold)
            let filter = threshold.filter.isEmpty ? nil : threshold.filter
            guard threshold.metric.isMeasured(by: reader) else {
                // Nothing was judged: a count of a figure no persona measures reads 0 and would pass unseen.
                return Verdict(
                    name: threshold.metric.name, expression: threshold.description, value: nil, passed: false,
                    measured: false, figure: threshold.metric.figure?.rawValue,
                    windowSeconds: threshold.window?.seconds, filter: filter)
            }
            if let window = threshold.window, let record {
                // Windowed: passes when every judged window held; a run with no judged window had no sample.
                return Verdict(
                    name: threshold.metric.name, expression: threshold.description, value: record.worst,
                    passed: record.judged > 0 && record.failed == 0, measured: true,
                    figure: threshold.metric.figure?.rawValue, windowSeconds: window.seconds,
                    windowsJudged: record.judged, windowsFailed: record.failed,
                    firstFailingWindow: record.firstFailure, filter: filter)
            }
            let value = self.value(of: threshold.metric, reader: reader)
            return Verdict(
                name: threshold.metric.name, expression: threshold.description, value: value,
                passed: value.map { threshold.comparison.holds($0, threshold.limit) } ?? false, measured: true,
                figure: threshold.metric.figure?.rawValue, filter: filter)
        }
        passed = thresholds.allSatisfy(\.passed) && aborted == nil
    }

    /// The figure a threshold is judged on; `nil` when the run produced no sample for it (which fails it).
    func value(of metric: ThresholdMetric, reader: SnapshotReader) -> Double? {
        // The exporter counts its failures outside the swarm's snapshot.
        if case .count(.exporterFailures) = metric { return Double(exporter?.failures ?? 0) }
        return metric.value(of: metric.reading(reader))
    }
}
