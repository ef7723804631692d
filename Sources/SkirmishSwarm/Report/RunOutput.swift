import Foundation
import SkirmishTelemetry

/// Writes a run's results folder: `summary.json`, `metrics.om` (OpenMetrics, `# EOF`-terminated, loadable with
/// `promtool tsdb create-blocks-from openmetrics`) and `report.html` (self-contained charts).
///
/// Each file is written to a temporary name and renamed into place, so a reader — or a run killed mid-write — never
/// sees half a file; an earlier checkpoint stays whole until the new one replaces it.
public enum RunOutput {
    public struct Failure: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String {
            "cannot write \(path): \(reason). Choose another folder with --out, or free some space."
        }
    }

    /// Writes every file and returns their paths.
    @discardableResult
    public static func write(
        summary: RunSummary, outcome: SwarmOutcome, to directory: String, serverMetrics: String? = nil
    ) throws -> [String] {
        try makeDirectory(directory)
        var written: [String] = []
        written.append(try writeSummary(summary, to: directory))
        let metrics = MetricsRenderer.render(outcome.snapshot, as: .openMetrics)
        written.append(try atomically(Data(metrics), to: directory + "/metrics.om"))
        if let serverMetrics {
            written.append(try atomically(Data(serverMetrics.utf8), to: directory + "/server-metrics.prom"))
        }
        let html = HTMLReport.render(
            title: "Skirmish run \(summary.run)", timeline: outcome.timeline, facts: facts(of: summary))
        written.append(try atomically(Data(html.utf8), to: directory + "/report.html"))
        return written
    }

    /// Writes only `summary.json` (soak checkpoints).
    @discardableResult
    public static func writeSummary(_ summary: RunSummary, to directory: String) throws -> String {
        try makeDirectory(directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(summary)
        } catch {
            throw Failure(path: directory + "/summary.json", reason: "\(error)")
        }
        return try atomically(data, to: directory + "/summary.json")
    }

    /// The headline figures shown at the top of the HTML report.
    static func facts(of summary: RunSummary) -> [(String, String)] {
        var facts: [(String, String)] = [
            ("script", summary.settings.script),
            ("target", summary.settings.target),
            ("duration", RunSummary.seconds(summary.durationSeconds)),
            ("peak bots", "\(summary.peakBots)"),
            ("matches completed", "\(summary.matchesCompleted)"),
            ("desyncs", "\(summary.desyncs)"),
            (
                "rtt p50 / p95 / p99",
                [summary.latency.rtt.p50, summary.latency.rtt.p95, summary.latency.rtt.p99].map(RunSummary.ms)
                    .joined(separator: " / ")
            ),
            ("snapshot age p99", RunSummary.ms(summary.latency.snapshotAge.p99)),
            ("tick lateness p99", RunSummary.ms(summary.latency.tickLateness.p99)),
            ("packets sent / received", "\(summary.packets.sent) / \(summary.packets.received)"),
            ("verdict", summary.passed ? "all thresholds hold" : "a threshold failed"),
        ]
        for verdict in summary.thresholds {
            facts.append((verdict.expression, verdict.passed ? "pass" : "FAIL"))
        }
        if let warning = summary.generatorWarning { facts.append(("warning", warning)) }
        return facts
    }

    private static func makeDirectory(_ directory: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw Failure(path: directory, reason: error.localizedDescription)
        }
    }

    private static func atomically(_ data: Data, to path: String) throws -> String {
        let temporary = path + ".partial"
        do {
            try data.write(to: URL(fileURLWithPath: temporary))
        } catch {
            throw Failure(path: path, reason: error.localizedDescription)
        }
        // rename(2) replaces the old file in one step: readers see the old or the new file, never a mix.
        guard rename(temporary, path) == 0 else {
            throw Failure(path: path, reason: String(cString: strerror(errno)))
        }
        return path
    }
}
