import Foundation
import SkirmishTelemetry

extension Comparison {
    /// The comparison as aligned lines for the terminal: one row per figure, changed figures first.
    public func table(all: Bool = false) -> String {
        var lines = ["\(new) compared with baseline \(base) (\(Self.method(options)))"]
        lines += notes.map { "note: \($0)" }
        lines.append("")
        let shown = all ? rows : rows.filter { $0.verdict == .better || $0.verdict == .worse }
        var cells = [["persona", "game", "figure", "base", "new", "change", "interval", "verdict"]]
        for row in shown.sorted(by: { Self.order($0) < Self.order($1) }) { cells.append(row.cells) }
        if shown.isEmpty {
            lines.append("no figure changed significantly (\(rows.count) compared; --all lists them)")
        } else {
            lines += RunSummary.align(cells)
        }
        let worse = rows.filter { $0.verdict == .worse }.count
        let better = rows.filter { $0.verdict == .better }.count
        let unchanged = rows.filter { $0.verdict == .noChange }.count
        let skipped = rows.filter { $0.verdict == .notCompared }.count
        lines.append("")
        lines.append(
            "\(worse) worse, \(better) better, \(unchanged) no change"
                + (skipped > 0 ? ", \(skipped) not compared (missing in one run)" : ""))
        return lines.joined(separator: "\n")
    }

    /// The comparison as a table of report.html.
    public var reportTable: ReportSummary.Table {
        ReportSummary.Table(
            "Compared with baseline \(base) — \(Self.method(options))",
            columns: ["persona", "game", "figure", "base", "new", "change", "interval", "verdict"],
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
            persona, game, metric, base.map { figure($0) } ?? "—", new.map { figure($0) } ?? "—", change, evidence,
            verdict.rawValue,
        ]
    }

    private func figure(_ value: Double, signed: Bool = false) -> String {
        let sign = signed && value > 0 ? "+" : ""
        if metric.range(of: #"_p\d+$"#, options: .regularExpression) != nil {
            return sign + RunSummary.ms(value).replacingOccurrences(of: "-", with: "−")
        }
        if metric.hasSuffix("per_second") || metric.hasSuffix("per_bot_hour") {
            return sign + String(format: "%.2f", value)
        }
        return sign + String(format: "%g", value)
    }
}
