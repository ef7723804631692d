import Foundation
import SkirmishTelemetry

/// Writes a run's results folder: `summary.json`, `metrics.om` (OpenMetrics, `# EOF`-terminated, loadable with
/// `promtool tsdb create-blocks-from openmetrics`), `metrics.json` (every series exactly, HDR counts included: what
/// `skirmish merge` adds up), `script.yaml` (the script as it ran) and `report.html` (self-contained charts).
///
/// Each file is written to a temporary name and renamed into place, so a reader — or a run killed mid-write — never
/// sees half a file; an earlier checkpoint stays whole until the new one replaces it. `summary.json` comes last: a
/// folder whose summary is final holds every other file of the same run.
public enum RunOutput {
    /// A results file that could not be written, with the path and the system's reason.
    public struct Failure: Error, CustomStringConvertible {
        /// The file that could not be written.
        public var path: String
        /// The system's reason (`No space left on device`).
        public var reason: String
        /// The path, the reason, and what to do about it.
        public var description: String {
            "cannot write \(path): \(reason). Choose another folder with --out, or free some space."
        }
    }

    /// Writes every file and returns their paths; `script` is the script's text (``SkirmishScript/Script/text``),
    /// written as `script.yaml` when given.
    @discardableResult
    public static func write(
        summary: RunSummary, outcome: SwarmOutcome, script: String? = nil, to directory: String,
        serverMetrics: String? = nil
    ) throws -> [String] {
        try write(
            summary: summary, snapshot: outcome.snapshot, script: script, to: directory, serverMetrics: serverMetrics)
    }

    /// Writes every file from a summary and the snapshot it was built from (what `skirmish merge` writes).
    @discardableResult
    public static func write(
        summary: RunSummary, snapshot: MetricsSnapshot, script: String?, to directory: String,
        serverMetrics: String? = nil
    ) throws -> [String] {
        try makeDirectory(directory)
        var written: [String] = []
        // Compact: a large run's histograms hold thousands of [value, count] pairs, one line each if indented.
        let exact = try encode(snapshot, as: directory + "/metrics.json", indented: false)
        written.append(try atomically(exact, to: directory + "/metrics.json"))
        let metrics = MetricsRenderer.renderOpenMetrics(snapshot)
        written.append(try atomically(Data(metrics), to: directory + "/metrics.om"))
        if let serverMetrics {
            written.append(try atomically(Data(serverMetrics.utf8), to: directory + "/server-metrics.prom"))
        }
        if let script { written.append(try atomically(Data(script.utf8), to: directory + "/script.yaml")) }
        written.append(try writeReport(summary, to: directory))
        written.insert(try writeSummary(summary, to: directory), at: 0)
        return written
    }

    /// Writes only `summary.json` (soak checkpoints).
    @discardableResult
    public static func writeSummary(_ summary: RunSummary, to directory: String) throws -> String {
        try makeDirectory(directory)
        return try atomically(try encode(summary, as: directory + "/summary.json"), to: directory + "/summary.json")
    }

    /// `value` as JSON with sorted keys, indented unless `indented` is false; `path` names the file in the error.
    private static func encode(_ value: some Encodable, as path: String, indented: Bool = true) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = indented ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        do {
            return try encoder.encode(value)
        } catch {
            throw Failure(path: path, reason: "\(error)")
        }
    }

    /// Writes `report.html` from a summary alone (its timeline included): what `skirmish report` runs.
    @discardableResult
    public static func writeReport(_ summary: RunSummary, to directory: String) throws -> String {
        try makeDirectory(directory)
        let html = HTMLReport.render(
            timeline: summary.timeline ?? RunTimeline(), summary: reportSummary(of: summary),
            title: "Skirmish run \(summary.run)")
        return try atomically(Data(html.utf8), to: directory + "/report.html")
    }

    /// The settings, headline totals and threshold verdicts the HTML report shows beside its charts.
    static func reportSummary(of summary: RunSummary) -> ReportSummary {
        typealias Entry = ReportSummary.Entry
        var settings = [
            Entry("script", summary.settings.script),
            Entry("script file", summary.settings.scriptPath),
            Entry("target", summary.settings.target),
            Entry("shard", summary.settings.shard),
            Entry("seed", "\(summary.settings.seed)"),
            Entry("event loops", "\(summary.settings.loops)"),
            Entry("planned duration", RunSummary.seconds(summary.settings.plannedSeconds)),
            Entry("started", summary.startedAt),
        ]
        if let name = summary.protocol { settings.insert(Entry("protocol", name), at: 2) }
        if let shards = summary.shards {
            // A merged run: which shards, and each one's own verdict on its bots alone.
            let verdicts = shards.map { "\($0.shard) \($0.passed && $0.healthPassed != false ? "passed" : "FAILED")" }
            let missing = summary.missingShards.map { "; missing \($0.map(String.init).joined(separator: ", "))" } ?? ""
            settings.append(Entry("merged from", verdicts.joined(separator: ", ") + missing))
        }
        // A figure nobody measured says so, instead of a 0 or a dash that reads like an empty measurement.
        func measured<Value>(_ value: Value?, _ format: (Value) -> String) -> String {
            value.map(format) ?? "not measured"
        }
        let latency = summary.latency
        var totals = [
            Entry(
                "duration",
                RunSummary.seconds(summary.durationSeconds) + (summary.interrupted ? " (interrupted)" : "")),
            Entry("peak bots", "\(summary.peakBots)"),
            Entry(
                "matches started / completed",
                measured(summary.matchesStarted) { "\($0) / \(summary.matchesCompleted ?? 0)" }),
            Entry("desyncs", measured(summary.desyncs) { "\($0)" }),
            Entry("mispredictions", measured(summary.mispredictions) { "\($0)" }),
            Entry(
                "rtt p50 / p95 / p99",
                measured(latency.rtt) { [$0.p50, $0.p95, $0.p99].map(RunSummary.ms).joined(separator: " / ") }),
            Entry("snapshot age p99", measured(latency.snapshotAge) { RunSummary.ms($0.p99) }),
            Entry("tick lateness p99", measured(latency.tickLateness) { RunSummary.ms($0.p99) }),
        ]
        // Kept only by summaries that know their protocol; older ones never had it, which says nothing.
        if summary.protocol != nil {
            totals.append(Entry("snapshot interval p99", measured(latency.snapshotInterval) { RunSummary.ms($0.p99) }))
        }
        totals += [
            Entry("packets sent / received", "\(summary.packets.sent) / \(summary.packets.received)"),
            Entry("errors", "\(summary.errors.values.reduce(0, +))"),
            Entry("reconnects", "\(summary.reconnects)"),
        ]
        if let server = summary.server, server.tickDurationP99 != nil {
            totals.append(
                Entry(
                    "server tick p50 / p99",
                    [server.tickDurationP50, server.tickDurationP99].map(RunSummary.ms).joined(separator: " / ")))
        }
        if let exporter = summary.exporter {
            totals.append(Entry("exporter pushes / failures", "\(exporter.pushes) / \(exporter.failures)"))
        }
        if let warning = summary.generatorWarning { totals.append(Entry("warning", warning)) }
        var verdicts = summary.thresholds.map { verdict in
            ReportSummary.Verdict(
                name: verdict.name, expectation: verdict.expression,
                observed: verdict.observed(
                    verdict.value.map { RunSummary.figure($0, for: verdict.name) } ?? "no sample"),
                passed: verdict.passed)
        }
        // A run stopped by abort_on_fail failed, whatever the verdicts of the run so far say.
        if let aborted = summary.aborted {
            verdicts.append(
                ReportSummary.Verdict(
                    name: "aborted", expectation: "\(aborted.threshold) (abort_on_fail)", observed: aborted.line,
                    passed: false))
        }
        // A soak's health checks sit beside the thresholds; a check still waiting for data is left out.
        let health = (summary.soak?.verdicts ?? []).filter { $0.status != .pending }.map { verdict in
            ReportSummary.Verdict(
                name: "health \(verdict.check.rawValue)", expectation: verdict.detail,
                observed: verdict.status.rawValue, passed: verdict.status != .fail)
        }
        return ReportSummary(
            headline: summary.reportHeadline, settings: settings, totals: totals, verdicts: verdicts + health,
            tables: summary.reportTables, notMeasured: summary.notMeasured.map(\.rawValue),
            charts: summary.reportCharts, baseline: summary.baseline)
    }

    private static func makeDirectory(_ directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw Failure(path: directory, reason: error.localizedDescription)
        }
    }

    private static func atomically(_ data: Data, to path: String) throws -> String {
        // A name of this writer's own: two shards merging one run at once each rename a whole file of their own
        // into place (a shared `.partial` name let one rename the other's half-written file).
        let temporary = path + ".partial-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        do {
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            unlink(temporary)
            throw Failure(path: path, reason: error.localizedDescription)
        }
        // rename(2) replaces the old file in one step: readers see the old or the new file, never a mix.
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(path: path, reason: reason)
        }
        return path
    }
}
