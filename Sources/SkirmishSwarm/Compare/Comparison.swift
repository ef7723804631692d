import Foundation
import SkirmishTelemetry
import SkirmishWire

/// Two runs' summaries side by side, persona by persona: what changed, and whether the change is real.
///
/// Each figure is compared with a test suited to its data, on the per-block samples each run keeps
/// (``RunSamples``):
/// - **Percentiles** (RTT, snapshot age, tick lateness): a block bootstrap — both runs' blocks are resampled with
///   replacement, the percentile recomputed from the resampled HDR values, and the difference's central interval
///   read from the resamples. Whole blocks are resampled because samples close in time are not independent.
/// - **Throughput** (packets per second): the same bootstrap of packets over seconds.
/// - **Counts** (errors, failed checks, matches completed): the same bootstrap of events over bot-seconds. Errors
///   and timeouts come in bursts, so a test that assumes independent events (Poisson) would call a rerun's burst a
///   regression; resampling whole blocks keeps the bursts whole.
/// - **Mispredictions**: the same bootstrap of mispredictions over predictions judged (the share of predictions
///   more than 2 px off), not over bot-seconds: a faster server lets bots judge more predictions per hour, and a
///   count per bot-hour would call that improvement worse.
/// - **Desyncs**: any desync in a run whose baseline had none is worse — a desync is a bug, not noise.
///
/// A run whose own generator could not keep its schedule (its summary's `generatorWarning`) measured the generator,
/// not the server: its latencies, throughput, mispredictions and completed matches (all of which a late generator
/// changes) are not compared, and the comparison says so.
///
/// A figure a persona did not measure in one run or both (its protocol has no round trip, nothing checks its
/// state: the persona's `figures` in `summary.json` lack it) is "not measured" there: it is never compared as 0,
/// never better or worse, and never fails `--fail-on worse`.
///
/// Every figure knows its direction (``Row/better``): lower is better for latencies, errors, desyncs,
/// mispredictions and failed checks; higher for throughput and completed matches.
///
/// Runs of two different scripts (their ``RunSummary/Settings/scriptDigest`` differ) are still compared, with a
/// note saying so: a difference may then be the script's, not the server's.
///
/// A difference is marked better or worse only when it is both significant (the interval excludes zero, or the
/// test's p-value is below `1 − confidence`) and large enough to matter (``Options/tolerance`` of the baseline and,
/// for latencies, at least ``Options/minimumLatencyChange``); otherwise it is "no change".
public struct Comparison: Sendable, Codable {
    /// How strict the comparison is.
    public struct Options: Sendable, Codable, Hashable {
        /// Two-sided confidence of each interval and test (0.99: a 1 % chance of calling noise a change, per figure).
        public var confidence: Double = 0.99
        /// The smallest relative change that counts (0.1: 10 % of the baseline).
        public var tolerance: Double = 0.10
        /// The smallest latency change that counts, in seconds.
        public var minimumLatencyChange: Double = 0.001
        /// Bootstrap resamples per figure.
        public var resamples: Int = 1_000
        /// Seeds the resampling, so a comparison is reproducible.
        public var seed: UInt64 = 1

        /// The defaults: 99 % confidence, 10 % tolerance, 1 ms smallest latency change, 1,000 resamples, seed 1.
        public init() {}
    }

    /// The verdict on one figure.
    public enum Verdict: String, Sendable, Codable, Hashable {
        case better, worse
        case noChange = "no change"
        /// One side has no data for it (a persona only one run had, a run without samples).
        case notCompared = "not compared"
        /// One run or both did not measure the figure at all (``Row/notMeasuredIn`` says which).
        case notMeasured = "not measured"
    }

    /// One figure of one persona in both runs.
    public struct Row: Sendable, Codable, Hashable {
        /// The persona's name in both scripts.
        public var persona: String
        /// The game the persona plays.
        public var game: String
        /// `rtt_p99`, `packets_per_second`, `errors_per_bot_hour`, …
        public var metric: String
        /// The baseline run's figure, in the metric's unit (seconds, per second, per bot-hour); `nil` without data.
        public var base: Double?
        /// The new run's figure, in the same unit; `nil` without data.
        public var new: Double?
        /// The bootstrap interval of `new − base` at the comparison's confidence (`nil` when a run had no data).
        public var low: Double?
        /// The interval's upper end (`low` is its lower end).
        public var high: Double?
        /// Better, worse, no change, not compared, or not measured.
        public var verdict: Verdict
        /// For a figure not measured, the runs that lack it: `base`, `new` or both (`nil` otherwise).
        public var notMeasuredIn: [String]? = nil
        /// Which way is better for this figure: `lower` or `higher` (`nil` in comparisons written before 0.22).
        public var better: Direction? = nil
    }

    /// Which way a figure improves.
    public enum Direction: String, Sendable, Codable, Hashable {
        case lower, higher
    }

    /// The baseline run's id.
    public var base: String
    /// The new run's id.
    public var new: String
    /// The confidence, tolerance and resampling the comparison used.
    public var options: Options
    /// Every compared figure of every persona, persona by persona.
    public var rows: [Row]
    /// What limits the comparison (a run limited by its generator, a run without samples).
    public var notes: [String] = []

    /// Whether any figure was compared at all.
    public var comparedAnything: Bool { rows.contains { $0.verdict != .notCompared && $0.verdict != .notMeasured } }

    /// Whether any figure got worse.
    public var anyWorse: Bool { rows.contains { $0.verdict == .worse } }

    /// Compares `new` with `base`, the baseline.
    public init(base: RunSummary, new: RunSummary, options: Options = Options()) {
        self.init(
            base: Side(
                run: base.run, personas: base.personas.map { ($0.name, $0.game) }, samples: base.samples,
                generatorWarning: base.generatorWarning, figures: Side.figures(of: base),
                script: (base.settings.script, base.settings.scriptDigest)),
            new: Side(
                run: new.run, personas: new.personas.map { ($0.name, $0.game) }, samples: new.samples,
                generatorWarning: new.generatorWarning, figures: Side.figures(of: new),
                script: (new.settings.script, new.settings.scriptDigest)),
            options: options)
    }

    /// What a comparison reads of one run.
    struct Side {
        var run: String
        var personas: [(name: String, game: String)]
        var samples: RunSamples?
        /// Set when the run's generator, not the server, limited its figures.
        var generatorWarning: String? = nil
        /// The figures each persona measured, by persona name; a persona missing here (a summary written before
        /// figures were kept) counts as having measured everything, as such summaries claimed.
        var figures: [String: Set<String>] = [:]
        /// The script's name and digest (`nil` digest: a summary from before 0.22).
        var script: (name: String, digest: String?)? = nil

        /// Whether persona `name` measured `figure` in this run.
        func measured(_ figure: RunFigure?, by name: String) -> Bool {
            guard let figure, let known = figures[name] else { return true }
            return known.contains(figure.rawValue)
        }

        static func figures(of summary: RunSummary) -> [String: Set<String>] {
            Dictionary(
                summary.personas.compactMap { persona in persona.figures.map { (persona.name, Set($0)) } },
                uniquingKeysWith: { $0.union($1) })
        }
    }

    init(base: Side, new: Side, options: Options) {
        self.base = base.run
        self.new = new.run
        self.options = options
        var random = SeededRandom(seed: options.seed)
        if let a = base.script, let b = new.script {
            // The digests when both runs have one (a name may hold `${NAME}`), the names otherwise.
            let differ = a.digest != nil && b.digest != nil ? a.digest != b.digest : a.name != b.name
            if differ {
                func named(_ side: (name: String, digest: String?)) -> String {
                    side.name + (side.digest.map { " (\($0))" } ?? "")
                }
                notes.append(
                    "the runs ran different scripts (base: \(named(a)), new: \(named(b))): a change may be the "
                        + "script's, not the server's")
            }
        }
        for side in [base, new] {
            if side.samples == nil {
                notes.append("\(side.run) has no per-block samples (written before 0.17): nothing in it can be tested")
            }
            if let warning = side.generatorWarning {
                notes.append(
                    "\(side.run) was limited by its own generator (\(warning.prefix { $0 != ":" })): latencies, "
                        + "throughput, mispredictions and completed matches are not compared")
            }
        }
        for side in [base, new]
        where side.samples?.blocks.contains(where: { block in
            block.personas.values.contains { $0.predictions == nil }
        }) == true {
            notes.append(
                "\(side.run) was written before 0.22 and kept no count of predictions: its misprediction rate is not "
                    + "compared")
        }
        let generatorLimited = base.generatorWarning != nil || new.generatorWarning != nil
        let baseTotals = base.samples?.total ?? [:]
        let newTotals = new.samples?.total ?? [:]
        var rows: [Row] = []
        let names =
            base.personas + new.personas.filter { persona in !base.personas.contains { $0.name == persona.name } }
        for (name, game) in names {
            guard let baseSamples = base.samples, let newSamples = new.samples, baseTotals[name] != nil,
                newTotals[name] != nil
            else {
                rows += Metric.allCases.map {
                    Row(
                        persona: name, game: game, metric: $0.name, base: nil, new: nil, low: nil, high: nil,
                        verdict: .notCompared, better: $0.better)
                }
                continue
            }
            let a = baseSamples.blocks.map { $0.personas[name] ?? RunSamples.Figures() }
            let b = newSamples.blocks.map { $0.personas[name] ?? RunSamples.Figures() }
            let aSeconds = baseSamples.blocks.map(\.seconds)
            let bSeconds = newSamples.blocks.map(\.seconds)
            for metric in Metric.allCases {
                let absentIn = [("base", base), ("new", new)].filter { !$0.1.measured(metric.figure, by: name) }
                guard absentIn.isEmpty else {
                    // Not measured is not 0: no value, no test, and never worse.
                    rows.append(
                        Row(
                            persona: name, game: game, metric: metric.name, base: nil, new: nil, low: nil, high: nil,
                            verdict: .notMeasured, notMeasuredIn: absentIn.map(\.0), better: metric.better))
                    continue
                }
                var row =
                    generatorLimited && metric.describesTheGenerator
                    ? Row(
                        persona: name, game: game, metric: metric.name, base: nil, new: nil, low: nil, high: nil,
                        verdict: .notCompared)
                    : metric.compare(a, aSeconds, b, bSeconds, options: options, random: &random)
                row.persona = name
                row.game = game
                row.better = metric.better
                rows.append(row)
            }
        }
        self.rows = rows
    }
}

extension Comparison {
    /// The figures compared for each persona.
    enum Metric: CaseIterable {
        case rttP50, rttP95, rttP99, snapshotAgeP99, tickLatenessP99, packetsPerSecond
        case errors, desyncs, mispredictions, checksFailed, matchesCompleted

        var name: String {
            switch self {
            case .rttP50: "rtt_p50"
            case .rttP95: "rtt_p95"
            case .rttP99: "rtt_p99"
            case .snapshotAgeP99: "snapshot_age_p99"
            case .tickLatenessP99: "tick_lateness_p99"
            case .packetsPerSecond: "packets_per_second"
            case .errors: "errors_per_bot_hour"
            case .desyncs: "desyncs_per_bot_hour"
            case .mispredictions: "misprediction_rate"
            case .checksFailed: "checks_failed_per_bot_hour"
            case .matchesCompleted: "matches_completed_per_bot_hour"
            }
        }

        /// Whether a run limited by its generator measured this figure of the generator rather than of the server:
        /// the timings, and what follows from them. A late generator reads snapshots late, so its bots' predictions
        /// miss more (seen: 3,316 against 6,824 mispredictions per bot-hour in two reruns under load), and it plays
        /// slower, so it completes fewer matches.
        var describesTheGenerator: Bool {
            switch self {
            case .rttP50, .rttP95, .rttP99, .snapshotAgeP99, .tickLatenessP99, .packetsPerSecond, .mispredictions,
                .matchesCompleted:
                true
            default: false
            }
        }

        /// The figure a persona must measure for this to be compared; `nil` for what every run measures.
        var figure: RunFigure? {
            switch self {
            case .rttP50, .rttP95, .rttP99: .rtt
            case .snapshotAgeP99: .snapshotAge
            case .tickLatenessP99: .tickLateness
            case .packetsPerSecond, .errors: nil
            case .desyncs: .desyncs
            case .mispredictions: .prediction
            case .checksFailed: .checks
            case .matchesCompleted: .matches
            }
        }

        /// Which way the figure improves.
        var better: Direction { self == .packetsPerSecond || self == .matchesCompleted ? .higher : .lower }

        func compare(
            _ a: [RunSamples.Figures], _ aSeconds: [Double], _ b: [RunSamples.Figures], _ bSeconds: [Double],
            options: Options, random: inout SeededRandom
        ) -> Row {
            var row = Row(
                persona: "", game: "", metric: name, base: nil, new: nil, low: nil, high: nil, verdict: .notCompared)
            switch self {
            case .rttP50, .rttP95, .rttP99, .snapshotAgeP99, .tickLatenessP99:
                let (path, q): (KeyPath<RunSamples.Figures, SparseDistribution?>, Double) =
                    switch self {
                    case .rttP50: (\.rtt, 0.5)
                    case .rttP95: (\.rtt, 0.95)
                    case .rttP99: (\.rtt, 0.99)
                    case .snapshotAgeP99: (\.snapshotAge, 0.99)
                    default: (\.tickLateness, 0.99)
                    }
                let baseBlocks = BlockDistributions(a.map { $0[keyPath: path] })
                let newBlocks = BlockDistributions(b.map { $0[keyPath: path] })
                guard let baseValue = baseBlocks.quantile(q), let newValue = newBlocks.quantile(q) else { return row }
                row.base = baseValue
                row.new = newValue
                let interval = Bootstrap.interval(
                    resamples: options.resamples, confidence: options.confidence, random: &random
                ) { random in
                    guard let x = baseBlocks.resampledQuantile(q, random: &random),
                        let y = newBlocks.resampledQuantile(q, random: &random)
                    else { return nil }
                    return y - x
                }
                row.low = interval?.lowerBound
                row.high = interval?.upperBound
                let threshold = max(options.minimumLatencyChange, options.tolerance * baseValue)
                row.verdict = verdict(difference: newValue - baseValue, interval: interval, threshold: threshold)
            case .packetsPerSecond:
                let baseRate = Double(a.reduce(0) { $0 &+ $1.packets }) / max(aSeconds.reduce(0, +), 1e-9)
                let newRate = Double(b.reduce(0) { $0 &+ $1.packets }) / max(bSeconds.reduce(0, +), 1e-9)
                row.base = baseRate
                row.new = newRate
                let interval = Bootstrap.interval(
                    resamples: options.resamples, confidence: options.confidence, random: &random
                ) { random in
                    Bootstrap.resampledRate(a.map { Double($0.packets) }, aSeconds, random: &random).flatMap { x in
                        Bootstrap.resampledRate(b.map { Double($0.packets) }, bSeconds, random: &random).map { $0 - x }
                    }
                }
                row.low = interval?.lowerBound
                row.high = interval?.upperBound
                row.verdict = verdict(
                    difference: newRate - baseRate, interval: interval, threshold: options.tolerance * baseRate)
            case .mispredictions:
                // Mispredictions over the predictions judged: the share of predictions more than 2 px off.
                let x = a.map { Double($0.mispredictions) }
                let y = b.map { Double($0.mispredictions) }
                guard a.allSatisfy({ $0.predictions != nil }), b.allSatisfy({ $0.predictions != nil }) else {
                    return row
                }
                let s = a.map { Double($0.predictions ?? 0) }
                let t = b.map { Double($0.predictions ?? 0) }
                guard s.reduce(0, +) > 0, t.reduce(0, +) > 0 else { return row }
                let baseRate = x.reduce(0, +) / s.reduce(0, +)
                let newRate = y.reduce(0, +) / t.reduce(0, +)
                row.base = baseRate
                row.new = newRate
                let interval = Bootstrap.interval(
                    resamples: options.resamples, confidence: options.confidence, random: &random
                ) { random in
                    Bootstrap.resampledRate(x, s, random: &random).flatMap { p in
                        Bootstrap.resampledRate(y, t, random: &random).map { $0 - p }
                    }
                }
                row.low = interval?.lowerBound
                row.high = interval?.upperBound
                row.verdict = verdict(
                    difference: newRate - baseRate, interval: interval, threshold: options.tolerance * baseRate)
            case .errors, .desyncs, .checksFailed, .matchesCompleted:
                let count: (RunSamples.Figures) -> UInt64 =
                    switch self {
                    case .errors: { $0.errors }
                    case .desyncs: { $0.desyncs }
                    case .checksFailed: { $0.checksFailed }
                    default: { $0.matchesCompleted }
                    }
                let x = a.map { Double(count($0)) }
                let y = b.map { Double(count($0)) }
                // Exposure in bot-seconds; a run that never had a bot connected has no rate to compare.
                let s = a.map(\.botSeconds)
                let t = b.map(\.botSeconds)
                guard s.reduce(0, +) > 0, t.reduce(0, +) > 0 else { return row }
                let baseRate = x.reduce(0, +) / s.reduce(0, +) * 3_600
                let newRate = y.reduce(0, +) / t.reduce(0, +) * 3_600
                row.base = baseRate
                row.new = newRate
                if self == .desyncs, baseRate == 0, newRate > 0 {
                    row.verdict = .worse
                    return row
                }
                let interval = Bootstrap.interval(
                    resamples: options.resamples, confidence: options.confidence, random: &random
                ) { random in
                    Bootstrap.resampledRate(x, s, random: &random).flatMap { p in
                        Bootstrap.resampledRate(y, t, random: &random).map { ($0 - p) * 3_600 }
                    }
                }
                row.low = interval?.lowerBound
                row.high = interval?.upperBound
                row.verdict = verdict(
                    difference: newRate - baseRate, interval: interval, threshold: options.tolerance * baseRate)
            }
            return row
        }

        private func verdict(difference: Double, interval: ClosedRange<Double>?, threshold: Double) -> Verdict {
            guard let interval else { return .noChange }
            let significant = interval.lowerBound > 0 || interval.upperBound < 0
            guard significant, abs(difference) >= threshold, difference != 0 else { return .noChange }
            return (difference > 0) == (better == .higher) ? .better : .worse
        }
    }
}

/// One figure's distribution per block, on a shared index of values, so a resample sums counts without merging.
struct BlockDistributions {
    /// Every value any block holds, ascending.
    let values: [UInt64]
    let resolution: Double
    /// Per block: (index into `values`, count) pairs.
    let blocks: [[(Int, UInt64)]]
    let totals: [UInt64]

    init(_ distributions: [SparseDistribution?]) {
        var union = Set<UInt64>()
        for distribution in distributions { if let distribution { union.formUnion(distribution.values) } }
        let values = union.sorted()
        var position: [UInt64: Int] = [:]
        for (index, value) in values.enumerated() { position[value] = index }
        self.values = values
        resolution = distributions.lazy.compactMap { $0?.resolution }.first ?? 1
        blocks = distributions.map { distribution in
            guard let distribution else { return [] }
            return zip(distribution.values, distribution.counts).map { (position[$0]!, $1) }
        }
        totals = distributions.map { $0?.total ?? 0 }
    }

    /// The quantile of all blocks together.
    func quantile(_ q: Double) -> Double? {
        quantile(q, of: Array(blocks.indices))
    }

    /// The quantile of as many blocks drawn with replacement.
    func resampledQuantile(_ q: Double, random: inout SeededRandom) -> Double? {
        guard !blocks.isEmpty else { return nil }
        let chosen = (0..<blocks.count).map { _ in Int(random.next() % UInt64(blocks.count)) }
        return quantile(q, of: chosen)
    }

    private func quantile(_ q: Double, of chosen: [Int]) -> Double? {
        var counts = [UInt64](repeating: 0, count: values.count)
        var total: UInt64 = 0
        for block in chosen {
            for (index, count) in blocks[block] { counts[index] &+= count }
            total &+= totals[block]
        }
        guard total > 0 else { return nil }
        let index = SparseDistribution.quantileIndex(q, values: values, counts: counts, total: total)
        return Double(values[index]) / resolution
    }
}

/// The resampling and the exact test the comparison uses.
enum Bootstrap {
    /// The central `confidence` interval of `statistic` over `resamples` draws; `nil` when too few draws had data.
    static func interval(
        resamples: Int, confidence: Double, random: inout SeededRandom,
        _ statistic: (inout SeededRandom) -> Double?
    ) -> ClosedRange<Double>? {
        var draws: [Double] = []
        draws.reserveCapacity(resamples)
        for _ in 0..<max(resamples, 20) {
            if let value = statistic(&random) { draws.append(value) }
        }
        guard draws.count >= max(resamples, 20) / 2 else { return nil }
        draws.sort()
        let tail = (1 - confidence) / 2
        let low = draws[min(draws.count - 1, Int((tail * Double(draws.count)).rounded(.down)))]
        let high = draws[min(draws.count - 1, Int(((1 - tail) * Double(draws.count)).rounded(.up)) - 1)]
        return low...max(low, high)
    }

    /// Events over seconds, over as many blocks drawn with replacement.
    static func resampledRate(_ counts: [Double], _ seconds: [Double], random: inout SeededRandom) -> Double? {
        guard !counts.isEmpty else { return nil }
        var events = 0.0
        var time = 0.0
        for _ in counts.indices {
            let index = Int(random.next() % UInt64(counts.count))
            events += counts[index]
            time += seconds[index]
        }
        return time > 0 ? events / time : nil
    }
}
