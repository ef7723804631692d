import Foundation
import SkirmishScript
import SkirmishTelemetry

/// The shards of one distributed run, read from their results folders, and the run's one summary built from them.
///
/// Each shard's folder holds its `summary.json`, its `metrics.json` (every series exactly, HDR counts included) and
/// its `script.yaml`. The merge adds the shards' series up and builds the summary the way a single process builds
/// its own (``RunSummary``'s one initialiser), so every figure read from the series — counts, and percentiles per
/// persona, tag and game — is the one a single process holding every bot would have computed, and whole-run
/// thresholds are judged on those figures. What is not exact is listed in the SkirmishSwarm article ("One result for
/// a sharded run"): rates divide by the longest shard's duration, a windowed threshold keeps each shard's windows,
/// the timeline's percentile lines show the highest shard's (``SkirmishTelemetry/RunTimeline/merging(_:)``), the
/// per-block samples lie on the coarsest shard's blocks, and the desync episodes are the first 100 in shard order.
///
/// Shards of different runs or scripts, a shard twice, a missing shard (unless allowed) and a shard still running
/// are refused, each with the folder it is about and what to do.
public struct RunMerge: Sendable {
    /// A shard's folder as read.
    public struct Shard: Sendable {
        /// The results folder.
        public var folder: String
        /// Its `summary.json`.
        public var summary: RunSummary
        /// Its `metrics.json`.
        public var snapshot: MetricsSnapshot
        /// Its place, `index` of `count`, from the summary's `i/n`.
        public var index: Int
        /// How many shards its run had.
        public var count: Int
    }

    /// Why the folders cannot be merged: the folder, what is wrong, and what to do.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        /// One line.
        public var description: String
        /// Whether a shard has not finished yet (a soak checkpoint): merging later may succeed.
        public var unfinished = false
    }

    /// The shards, by index.
    public let shards: [Shard]
    /// The script the shards ran, read again from the first shard's `script.yaml` with their variables.
    public let script: Script
    /// Shard indices of the run that no folder holds (empty unless missing shards were allowed).
    public let missing: [Int]

    /// The largest `summary.json` a merge reads (a soak's, with its timeline and samples, is a few MiB).
    public static let maxSummaryBytes = 256 << 20
    /// The largest `metrics.json` a merge reads (25,000 series with their histograms fit well within it).
    public static let maxMetricsBytes = 1 << 30
    /// The longest run a merge accepts, in seconds (30 days).
    static let maxSeconds = 30.0 * 86_400

    /// The folder beside the shards' that a merge writes by default, and that ``folders(in:)`` never reads as a
    /// shard.
    public static let mergedFolder = "merged"

    /// The results folders among `paths`: each path that holds a `summary.json`, or else each of its direct
    /// subfolders that does (a run's parent folder, `/results/<run>/`, holding one folder per shard), except
    /// ``mergedFolder``.
    public static func folders(in paths: [String]) throws(Problem) -> [String] {
        let files = FileManager.default
        var folders: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw Problem(description: "\(path): no such folder. Give the results folders of a run's shards.")
            }
            if files.fileExists(atPath: path + "/summary.json") {
                folders.append(path)
                continue
            }
            let children = ((try? files.contentsOfDirectory(atPath: path)) ?? []).sorted()
                .filter { $0 != mergedFolder }.map { path + "/" + $0 }
                .filter { files.fileExists(atPath: $0 + "/summary.json") }
                // A merge written beside the shards (`--out run/report`) is not one of them.
                .filter { (try? RunSummary.load(path: $0 + "/summary.json"))?.shards == nil }
            guard !children.isEmpty else {
                throw Problem(
                    description: "\(path) holds no summary.json, nor does any folder in it. Give the folders a "
                        + "sharded run wrote (--out of each shard), or the folder that holds them.")
            }
            folders += children
        }
        return folders
    }

    /// Reads every folder and checks that together they are one run; `loader` reads the script, its environment
    /// giving the variables the values the shards read (checked by digest).
    public init(folders: [String], loader: ScriptLoader, allowMissing: Bool = false) throws(Problem) {
        guard !folders.isEmpty else { throw Problem(description: "no folder to merge: give the shards' folders") }
        var shards: [Shard] = []
        for folder in folders {
            for (file, limit) in [("summary.json", Self.maxSummaryBytes), ("metrics.json", Self.maxMetricsBytes)] {
                let size = (try? FileManager.default.attributesOfItem(atPath: folder + "/" + file))?[.size] as? Int
                if let size, size > limit {
                    throw Problem(
                        description: "\(folder)/\(file) is \(size) bytes, above the \(limit >> 20) MiB a run writes: "
                            + "it is not a shard's, or it is damaged.")
                }
            }
            let summary: RunSummary
            do {
                summary = try RunSummary.load(path: folder + "/summary.json")
            } catch {
                throw Problem(description: error.description)
            }
            guard summary.durationSeconds.isFinite, (0...Self.maxSeconds).contains(summary.durationSeconds),
                summary.settings.plannedSeconds.isFinite,
                (0...Self.maxSeconds).contains(summary.settings.plannedSeconds)
            else {
                throw Problem(description: "\(folder)/summary.json gives a run length no run has: it is damaged.")
            }
            if summary.soak?.state == .running {
                throw Problem(
                    description: "\(folder) holds a soak checkpoint, not a finished run: its shard is still running "
                        + "or was killed before it ended. Merge once every shard has finished.", unfinished: true)
            }
            guard let data = FileManager.default.contents(atPath: folder + "/metrics.json") else {
                throw Problem(
                    description: "\(folder) has no metrics.json: it was written before 0.23, or by a run that "
                        + "could not finish writing. Run the shards again with this version.")
            }
            let snapshot: MetricsSnapshot
            do {
                snapshot = try JSONDecoder().decode(MetricsSnapshot.self, from: data)
            } catch {
                throw Problem(
                    description:
                        "\(folder)/metrics.json is not a Skirmish metrics file (\(RunSummary.describe(error))).")
            }
            let parts = summary.settings.shard.split(separator: "/")
            guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count > 0,
                (0..<count).contains(index)
            else {
                throw Problem(
                    description: "\(folder): its shard `\(summary.settings.shard)` is not i/n; it is not one shard of "
                        + "a run (a merged summary cannot be merged again).")
            }
            shards.append(Shard(folder: folder, summary: summary, snapshot: snapshot, index: index, count: count))
        }
        let first = shards[0]
        // One metric name means one kind and one histogram scale in every shard: histograms of two scales cannot
        // add up (shards of two versions, or a damaged file).
        var kinds: [String: (kind: MetricFamily.Kind, folder: String)] = [:]
        for shard in shards {
            for series in shard.snapshot.series {
                if let known = kinds[series.family.name], known.kind != series.family.kind {
                    throw Problem(
                        description: "\(known.folder) and \(shard.folder) record \(series.family.name) differently (a "
                            + "counter, gauge or histogram scale of its own): shards of two Skirmish versions cannot "
                            + "be merged; run every shard with one.")
                }
                kinds[series.family.name] = kinds[series.family.name] ?? (series.family.kind, shard.folder)
            }
        }
        for shard in shards.dropFirst() {
            func differ(_ what: String, _ a: String, _ b: String, _ fix: String) -> Problem {
                Problem(
                    description: "\(first.folder) and \(shard.folder) are not shards of one run: \(what) \(a) and "
                        + "\(b). \(fix)")
            }
            guard shard.summary.run == first.summary.run else {
                throw differ(
                    "their run ids are", first.summary.run, shard.summary.run,
                    "Give every shard the same --run-id (SKIRMISH_RUN_ID), and merge one run's folders.")
            }
            guard shard.summary.settings.scriptDigest == first.summary.settings.scriptDigest,
                shard.summary.settings.script == first.summary.settings.script
            else {
                throw differ(
                    "their scripts differ,", first.summary.settings.script, shard.summary.settings.script,
                    "Every shard must run the same script text.")
            }
            guard shard.summary.settings.variablesDigest == first.summary.settings.variablesDigest else {
                throw differ(
                    "they read the script's variables with other values:", Self.describe(first.summary.settings),
                    Self.describe(shard.summary.settings), "Give every shard the same --env values.")
            }
            guard shard.count == first.count else {
                throw differ(
                    "they split the run in", "\(first.count)", "\(shard.count) shards",
                    "Give every shard the same shard count.")
            }
        }
        var byIndex: [Int: Shard] = [:]
        for shard in shards {
            if let twin = byIndex[shard.index] {
                throw Problem(
                    description: "\(twin.folder) and \(shard.folder) are both shard \(shard.index)/\(shard.count) of "
                        + "run \(shard.summary.run): give each shard once.")
            }
            byIndex[shard.index] = shard
        }
        let missing = (0..<first.count).filter { byIndex[$0] == nil }
        guard missing.isEmpty || allowMissing else {
            throw Problem(
                description: "run \(first.summary.run) has \(first.count) shards and "
                    + "\(missing.count == 1 ? "shard" : "shards") \(missing.map(String.init).joined(separator: ", ")) "
                    + "\(missing.count == 1 ? "is" : "are") not among the folders given. Give every shard's folder, "
                    + "or --allow-missing to merge what there is (the summary then says which are missing).")
        }
        self.shards = byIndex.keys.sorted().compactMap { byIndex[$0] }
        self.missing = missing
        self.script = try Self.script(of: first, loader: loader)
    }

    /// The script of `shard`'s folder, loaded with `loader`'s environment (which must give its variables the values
    /// the shards read) and checked against both digests.
    private static func script(of shard: Shard, loader: ScriptLoader) throws(Problem) -> Script {
        let path = shard.folder + "/script.yaml"
        let script: Script
        do {
            script = try loader.load(path: path)
        } catch {
            throw Problem(
                description: "cannot read the script the shards ran, \(path): \(error). Each run writes it beside "
                    + "its summary.json; run the shards again with this version if it is missing.")
        }
        guard script.digest == shard.summary.settings.scriptDigest else {
            throw Problem(
                description: "\(path) is not the script \(shard.folder) ran (its digest differs from the summary's): "
                    + "put back the script.yaml the run wrote.")
        }
        guard script.variablesDigest == shard.summary.settings.variablesDigest else {
            let names = (shard.summary.settings.variables ?? []).joined(separator: ", ")
            throw Problem(
                description: "the shards read "
                    + (names.isEmpty ? "no variable" : "the variables \(names)")
                    + " with other values than this merge has (runs write no values, since a script may read a "
                    + "secret): give each as the shards had it, with --env NAME=VALUE or in the environment.")
        }
        return script
    }

    private static func describe(_ settings: RunSummary.Settings) -> String {
        let names = (settings.variables ?? []).joined(separator: ", ")
        return names.isEmpty ? "none" : "\(names) (digest \(settings.variablesDigest ?? "none"))"
    }

    /// The run's one summary and the merged series it was computed from.
    public func merged() -> (summary: RunSummary, snapshot: MetricsSnapshot) {
        var snapshot = MetricsSnapshot()
        for shard in shards { snapshot.merge(shard.snapshot) }
        let summaries = shards.map(\.summary)
        let first = summaries[0]
        var outcome = SwarmOutcome(
            snapshot: snapshot,
            timeline: RunTimeline.merging(
                summaries.compactMap { summary in summary.timeline?.within(seconds: summary.durationSeconds + 60) }),
            elapsed: .seconds(summaries.map(\.durationSeconds).max() ?? 0),
            interrupted: summaries.contains(where: \.interrupted), peakBots: summaries.reduce(0) { $0 + $1.peakBots })
        outcome.busiestLoop = summaries.compactMap(\.generatorBusy).max()
        outcome.aborted = summaries.compactMap(\.aborted).min { $0.atSeconds < $1.atSeconds }
        outcome.samples = RunSamples.merging(summaries.compactMap(\.samples))
        outcome.desyncEpisodes = Array(summaries.flatMap { $0.desyncEpisodes ?? [] }.prefix(100))
        outcome.personaPeaks = script.personas.map { persona in
            summaries.reduce(0) { total, summary in
                total + (summary.personas.first { $0.name == persona.name }?.peakBots ?? 0)
            }
        }
        outcome.windows = script.thresholds.indices.map { index in windows(of: index) }

        var settings = first.settings
        let count = shards[0].count
        settings.shard = missing.isEmpty ? "all of \(count)" : "\(shards.count) of \(count)"
        settings.loops = summaries.reduce(0) { $0 + $1.settings.loops }
        settings.plannedSeconds = summaries.map(\.settings.plannedSeconds).max() ?? settings.plannedSeconds
        let targets = Set(summaries.map(\.settings.target))
        if targets.count > 1 { settings.target = targets.sorted().joined(separator: ", ") }

        var summary = RunSummary(
            outcome: outcome, script: script, runID: first.run, settings: settings,
            startedAt: summaries.map(\.startedAt).min() ?? first.startedAt, exporter: exporter(of: summaries),
            cpuSeconds: nil)
        summary.server = summaries.compactMap(\.server).first
        summary.shards = shards.map { shard in
            RunSummary.ShardResult(
                shard: shard.summary.settings.shard, folder: shard.folder, passed: shard.summary.passed,
                healthPassed: shard.summary.soak?.passed, durationSeconds: shard.summary.durationSeconds,
                peakBots: shard.summary.peakBots)
        }
        summary.missingShards = missing.isEmpty ? nil : missing
        // A shard whose own health checks failed (a soak's memory or descriptors) fails the run: the merge cannot
        // judge a process it did not watch.
        summary.passed = summary.passed && shards.allSatisfy { $0.summary.soak?.passed ?? true } && missing.isEmpty
        return (summary, snapshot)
    }

    /// A windowed threshold's record over the shards: each shard judged the windows of its own bots, so the
    /// threshold failed when any shard's window did; the worst of their worst values, the earliest failure.
    private func windows(of index: Int) -> ThresholdJudge.WindowRecord? {
        let threshold = script.thresholds[index]
        guard threshold.window != nil else { return nil }
        var record = ThresholdJudge.WindowRecord()
        var judgedAny = false
        for shard in shards {
            guard index < shard.summary.thresholds.count else { continue }
            let verdict = shard.summary.thresholds[index]
            guard let judged = verdict.windowsJudged else { continue }
            judgedAny = true
            record.judged = max(record.judged, judged)
            record.failed = max(record.failed, verdict.windowsFailed ?? 0)
            if let breach = verdict.firstFailingWindow,
                record.firstFailure.map({ breach.atSeconds < $0.atSeconds }) ?? true
            {
                record.firstFailure = breach
            }
            if let value = verdict.value {
                switch threshold.comparison {
                case .less, .lessOrEqual: record.worst = max(record.worst ?? value, value)
                case .greater, .greaterOrEqual: record.worst = min(record.worst ?? value, value)
                case .equal, .notEqual:
                    if !verdict.passed || record.worst == nil { record.worst = value }
                }
            }
        }
        return judgedAny ? record : nil
    }

    private func exporter(of summaries: [RunSummary]) -> RunSummary.Exporter? {
        let exporters = summaries.compactMap(\.exporter)
        guard !exporters.isEmpty else { return nil }
        var merged = RunSummary.Exporter(pushes: 0, failures: 0, failuresByReason: [:], lastError: nil)
        for exporter in exporters {
            merged.pushes &+= exporter.pushes
            merged.failures &+= exporter.failures
            merged.failuresByReason.merge(exporter.failuresByReason, uniquingKeysWith: &+)
            merged.lastError = merged.lastError ?? exporter.lastError
        }
        return merged
    }
}
