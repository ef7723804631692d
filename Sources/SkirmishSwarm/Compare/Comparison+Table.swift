import Foundation
import SkirmishTelemetry

extension Comparison {
    /// The comparison as aligned lines for the terminal: one row per figure, changed figures first, then the
    /// figures a run did not measure, named per persona (all of them as rows with `all`).
    public func table(all: Bool = false) -> String {
        var lines = ["\(new) compared with baseline \(base) (\(Self.method(options)))"]
        lines += notes.map { "note: \($0)" }
        lines.append("")
        let shown = all ? rows : rows.filter { $0.verdict == .better || $0.verdict == .worse }
        var cells = [["persona", "game", "figure", "better", "base", "new", "change", "interval", "verdict"]]
        for row in shown.sorted(by: { Self.order($0) < Self.order($1) }) { cells.append(row.cells) }
        let absent = rows.filter { $0.verdict == .notMeasured }
        if shown.isEmpty {
            lines.append(
                "no figure changed significantly (\(rows.count - absent.count) compared; --all lists them)")
        } else {
            lines += RunSummary.align(cells)
        }
        // Only what one run measured and the other did not: a figure neither measured (a Snap player's snapshot
        // age) is no news, and is counted below and listed by `--all`.
        let oneSided = absent.filter { $0.notMeasuredIn?.count == 1 }
        if !all, !oneSided.isEmpty {
            // One line per persona and side rather than a row per figure: what was never measured cannot change.
            var groups: [(persona: String, side: String, metrics: [String])] = []
            for row in oneSided {
                let side = row.whereAbsent(base: base, new: new)
                if let index = groups.firstIndex(where: { $0.persona == row.persona && $0.side == side }) {
                    groups[index].metrics.append(row.metric)
                } else {
                    groups.append((row.persona, side, [row.metric]))
                }
            }
            lines.append("")
            lines += groups.map { "\($0.persona): \($0.side): \($0.metrics.joined(separator: ", "))" }
        }
        let worse = rows.filter { $0.verdict == .worse }.count
        let better = rows.filter { $0.verdict == .better }.count
        let unchanged = rows.filter { $0.verdict == .noChange }.count
        let skipped = rows.filter { $0.verdict == .notCompared }.count
        lines.append("")
        lines.append(
            "\(worse) worse, \(better) better, \(unchanged) no change"
                + (skipped > 0 ? ", \(skipped) not compared (missing in one run)" : "")
                + (absent.isEmpty ? "" : ", \(absent.count) not measured in one run or both (never compared as 0)"))
        return lines.joined(separator: "\n")
    }

    /// The comparison as a table of report.html.
    public var reportTable: ReportSummary.Table {
        ReportSummary.Table(
            "Compared with baseline \(base) — \(Self.method(options))",
            columns: ["persona", "game", "figure", "better", "base", "new", "change", "interval", "verdict"],
            rows: rows.sorted(by: { Self.order($0) < Self.order($1) }).map(\.cells), wide: true,
            empty: "no persona in common")
    }

    static func method(_ options: Options) -> String {
        String(
            format: "%.0f%% intervals from a %d-draw block bootstrap (whole seconds of each run resampled); a change "
                + "counts when its interval excludes 0 and it is at least %.0f%% of the baseline (latencies: and "
                + "%.1f ms); a desync where the baseline had none is worse",
            options.confidence * 100, options.resamples, options.tolerance * 100, options.minimumLatencyChange * 1_000)
    }

    private static func order(_ row: Row) -> Int {
        switch row.verdict {
        case .worse: 0
        case .better: 1
        case .noChange: 2
        case .notCompared: 3
        case .notMeasured: 4
        }
    }
}

extension Comparison.Row {
    /// The row's cells: figures in their unit, the change in percent, the interval or p-value.
    var cells: [String] {
        let change: String
        if let base, let new, base != 0 {
            change = String(format: "%+.1f%%", (new - base) / abs(base) * 100)
        } else {
            change = "—"
        }
        let evidence: String
        if let low, let high {
            evidence = "[\(figure(low, signed: true)), \(figure(high, signed: true))]"
        } else {
            evidence = "—"
        }
        return [
            persona, game, metric, better?.rawValue ?? "—", base.map { figure($0) } ?? "—",
            new.map { figure($0) } ?? "—", change, evidence,
            verdict == .notMeasured ? whereAbsent(base: nil, new: nil) : verdict.rawValue,
        ]
    }

    /// `not measured in the baseline`, `… in the new run`, `… in either run`; with run ids when given.
    func whereAbsent(base: String?, new: String?) -> String {
        let sides = notMeasuredIn ?? []
        switch (sides.contains("base"), sides.contains("new")) {
        case (true, true): return "not measured in either run"
        case (true, false): return "not measured in the baseline" + (base.map { " \($0)" } ?? "")
        case (false, true): return "not measured in the new run" + (new.map { " \($0)" } ?? "")
        case (false, false): return "not measured"
        }
    }

    private func figure(_ value: Double, signed: Bool = false) -> String {
        let sign = signed && value > 0 ? "+" : ""
        if metric.range(of: #"_p\d+$"#, options: .regularExpression) != nil {
            return sign + RunSummary.ms(value).replacingOccurrences(of: "-", with: "−")
        }
        if metric.hasSuffix("_rate") {
            return sign + String(format: "%.2f%%", value * 100)
        }
        if metric.hasSuffix("per_second") || metric.hasSuffix("per_bot_hour") {
            return sign + String(format: "%.2f", value)
        }
        return sign + String(format: "%g", value)
    }
}
