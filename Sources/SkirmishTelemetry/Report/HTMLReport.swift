import Foundation

/// The self-contained `report.html`: verdict and headline figures, thresholds, charts over time, then the tables a
/// k6 or Gatling user looks for (per persona and game, latencies, errors, rejections, exporter, server).
///
/// No script and no external resource of any kind, so the page opens from a CI artefact store or an email
/// attachment exactly as it was written, and nothing leaks to the network when it is viewed. Charts and tables sit
/// in grids that fill the width (three charts a row at 1400 px), so the page has no half-empty stretches. A figure
/// the run did not measure (``ReportSummary/notMeasured``) gets no chart and no line: a flat zero would read as a
/// measurement; the page names it once as not measured instead.
package enum HTMLReport {
    /// The page for one run.
    package static func render(timeline: RunTimeline, summary: ReportSummary, title: String) -> String {
        let points = timeline.points
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title))</title>
            <style>\(style)</style></head><body>
            <h1>\(escape(title))</h1>

            """
        let verdict = summary.passed ? "PASS" : "FAIL"
        html += "<div class=\"top\"><p class=\"verdict \(verdict.lowercased())\">\(verdict)"
        html += summary.verdicts.isEmpty ? " (no thresholds)</p>\n" : "</p>\n"
        if !summary.headline.isEmpty {
            html += "<div class=\"cards\">"
            for entry in summary.headline {
                html += "<div class=\"card\"><b>\(escape(entry.value))</b>\(escape(entry.name))</div>"
            }
            html += "</div>\n"
        }
        html += "</div>\n<div class=\"tables\">\n"
        if !summary.verdicts.isEmpty {
            html += "<section><h2>Thresholds</h2>\n<table><tr><th>threshold</th><th>observed</th><th></th></tr>\n"
            for item in summary.verdicts {
                let mark = item.passed ? "<td class=\"pass\">pass</td>" : "<td class=\"fail\">fail</td>"
                // `rtt_p99 < 50ms` already names its metric; a health check's detail does not.
                let threshold =
                    item.expectation.hasPrefix(item.name) ? item.expectation : "\(item.name): \(item.expectation)"
                html +=
                    "<tr><td>\(escape(threshold))</td><td class=\"\(numeric(item.observed))\">\(escape(item.observed))"
                    + "</td>\(mark)</tr>\n"
            }
            html += "</table></section>\n"
        }
        html += entries("Settings", summary.settings)
        html += entries("Totals", summary.totals)
        let absent = Set(summary.notMeasured)
        html += "</div>\n<h2>Over time</h2>\n"
        if !summary.notMeasured.isEmpty {
            html += "<p class=\"absent\">Not measured in this run (its protocol and behaviours do not measure them), "
            html += "so not charted: \(escape(summary.notMeasured.map(figureLabel).joined(separator: ", "))).</p>\n"
        }
        html += "<div class=\"charts\">\n"
        html += chart(
            "Bots connected", unit: "",
            series: [("bots", "#1f77b4", points.map { ($0.t, Optional($0.bots)) })])
        // The baseline's whole-run figure, as a dashed line on the chart of the same figure (`--baseline`).
        func reference(_ key: String, scale: Double = 1_000) -> (name: String, value: Double)? {
            summary.baseline.flatMap { baseline in
                baseline.figures[key].map { ("baseline \(baseline.run)", $0 * scale) }
            }
        }
        html += chart(
            "Packets per second (sent + received)", unit: "/s",
            series: [("packets/s", "#2ca02c", points.map { ($0.t, Optional($0.packetsPerSecond)) })],
            reference: reference("packets_per_second", scale: 1))
        let errors = ("errors", "#9467bd", points.map { ($0.t, Optional(Double($0.errors))) })
        if absent.contains("desyncs") {
            html += chart("Errors (cumulative)", unit: "", series: [errors])
        } else {
            html += chart(
                "Desyncs and errors (cumulative)", unit: "",
                series: [("desyncs", "#d62728", points.map { ($0.t, Optional(Double($0.desyncs))) }), errors])
        }
        if !absent.contains("rtt") {
            html += chart(
                "Round-trip time", unit: "ms",
                series: [
                    ("p50", "#1f77b4", points.map { ($0.t, $0.rttP50.map { $0 * 1_000 }) }),
                    ("p95", "#ff7f0e", points.map { ($0.t, $0.rttP95.map { $0 * 1_000 }) }),
                    ("p99", "#d62728", points.map { ($0.t, $0.rttP99.map { $0 * 1_000 }) }),
                ], reference: reference("rtt_p99").map { ($0.name + " p99", $0.value) })
        }
        if !absent.contains("snapshot_age") {
            html += chart(
                "Snapshot age p99", unit: "ms",
                series: [("p99", "#8c564b", points.map { ($0.t, $0.snapshotAgeP99.map { $0 * 1_000 }) })],
                reference: reference("snapshot_age_p99"))
        }
        if !absent.contains("tick_lateness") {
            html += chart(
                "Tick lateness p99 (bot inputs)", unit: "ms",
                series: [("p99", "#e377c2", points.map { ($0.t, $0.tickLatenessP99.map { $0 * 1_000 }) })],
                reference: reference("tick_lateness_p99"))
        }
        for extra in summary.charts {
            html += chart(
                extra.title, unit: extra.unit,
                series: extra.series.enumerated().map { index, line in
                    (line.name, palette[index % palette.count], line.points.map { ($0.x, $0.y) })
                }, axis: extra.axis)
        }
        html += "</div>\n"
        // Wide tables take the full width; the others flow into balanced columns (short ones stack), so no table
        // stands beside a blank column.
        for table in summary.tables where table.fillsWidth { html += self.table(table) }
        html += "<div class=\"flow\">\n"
        for table in summary.tables where !table.fillsWidth { html += self.table(table) }
        html += "</div>\n</body></html>\n"
        return html
    }

    /// A figure's summary name as a sentence says it (`snapshot_age` → `snapshot age`, `rtt` → `round trips`).
    static func figureLabel(_ figure: String) -> String {
        switch figure {
        case "rtt": "round trips"
        case "loss": "packet loss"
        case "prediction": "prediction error"
        default: String(figure.map { $0 == "_" ? " " : $0 })
        }
    }

    /// A two-column table of named values, or nothing when there are none.
    private static func entries(_ heading: String, _ entries: [ReportSummary.Entry]) -> String {
        guard !entries.isEmpty else { return "" }
        var html = "<section><h2>\(escape(heading))</h2>\n<table>\n"
        for entry in entries {
            html += "<tr><th>\(escape(entry.name))</th><td>\(escape(entry.value))</td></tr>\n"
        }
        return html + "</table></section>\n"
    }

    /// The class of a value cell: right-aligned, kept on one line when short (a figure), wrapped when long (a
    /// sentence such as a windowed threshold's account), so no table is wider than its column.
    private static func numeric(_ cell: String) -> String {
        cell.count <= 24 ? "n" : "n long"
    }

    /// A titled table; an empty one says so in a sentence instead of showing a bare header.
    static func table(_ table: ReportSummary.Table) -> String {
        var html = "<section\(table.fillsWidth ? " class=\"wide\"" : "")><h2>\(escape(table.title))</h2>\n"
        guard !table.rows.isEmpty else { return html + "<p class=\"empty\">\(escape(table.empty))</p></section>\n" }
        html += "<table><tr>" + table.columns.map { "<th>\(escape($0))</th>" }.joined() + "</tr>\n"
        for row in table.rows {
            html +=
                "<tr>"
                + row.enumerated().map { index, cell in
                    index == 0 ? "<td>\(escape(cell))</td>" : "<td class=\"\(numeric(cell))\">\(escape(cell))</td>"
                }.joined() + "</tr>\n"
        }
        return html + "</table></section>\n"
    }

    private static let style = """
        body{font-family:system-ui,sans-serif;margin:20px auto;padding:0 20px;color:#222;max-width:1400px}\
        h1{font-size:22px;margin:0 0 12px}h2{font-size:16px;margin:22px 0 8px}\
        table{border-collapse:collapse;font-size:13px;width:100%}\
        td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;overflow-wrap:break-word}\
        td.n{text-align:right;white-space:nowrap}td.n.long{white-space:normal}section{min-width:0;overflow-x:auto}\
        th{background:#f5f5f5}.verdict{display:inline-block;padding:10px 18px;font-weight:bold;border-radius:4px;\
        margin:0;font-size:18px}\
        .verdict.pass,.pass{background:#d8f0d8;color:#1b5e20}.verdict.fail,.fail{background:#f8d7d7;color:#b71c1c}\
        .top{display:flex;gap:16px;align-items:stretch;flex-wrap:wrap}.cards{display:flex;gap:10px;flex-wrap:wrap}\
        .card{border:1px solid #ddd;border-radius:4px;padding:6px 14px;font-size:12px;color:#555;min-width:110px}\
        .card b{display:block;font-size:20px;color:#222}\
        .tables{display:grid;grid-template-columns:repeat(auto-fit,minmax(440px,1fr));gap:0 20px;align-items:start}\
        .empty{color:#1b5e20;margin:4px 0}.absent{color:#555;font-size:13px;margin:4px 0 10px}\
        .flow{column-width:400px;column-gap:20px}.flow section{break-inside:avoid;display:inline-block;width:100%}\
        .flow h2:first-child{margin-top:14px}\
        .charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(400px,1fr));gap:14px}\
        .chart{border:1px solid #ddd;border-radius:4px;background:#fff;width:100%;height:auto}\
        .chart text{font-size:11px;fill:#444}.chart .title{font-size:13px;font-weight:bold;fill:#222}\
        .chart .hover:hover{fill:rgba(0,0,0,.06)}
        """

    /// The lines' colours, in order.
    static let palette = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    ]

    /// An SVG line chart; `nil` values break a line (no data in that interval). Over time by default; over
    /// percentiles (`x` in nines) with `.percentile`.
    static func chart(
        _ title: String, unit: String, series: [(String, String, [(Double, Double?)])],
        axis horizontal: ReportSummary.Chart.Axis = .time, reference: (name: String, value: Double)? = nil
    ) -> String {
        let width = 460.0
        let height = 240.0
        let left = 60.0
        let right = 16.0
        let top = 40.0
        let bottom = 30.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let xs = series.flatMap { $0.2.map(\.0) }
        let measured = series.flatMap { $0.2.compactMap(\.1) }.filter(\.isFinite)
        // The reference line counts towards the scale, so it is always in view.
        let ys = measured.isEmpty ? [] : measured + [reference?.value].compactMap { $0 }.filter(\.isFinite)
        let xAxis =
            horizontal == .percentile
            ? nines(max((xs.max() ?? 1).rounded(.up), 1))
            : axis(max(xs.max() ?? 0, 1))
        let yAxis = axis(ys.max() ?? 0)
        let xMax = xAxis.top
        let yMax = yAxis.top
        let timeUnit: (name: String, seconds: Double) =
            xMax >= 7_200 ? ("h", 3_600) : xMax >= 300 ? ("min", 60) : ("s", 1)
        func px(_ x: Double) -> String { format(left + x / xMax * plotWidth) }
        func py(_ y: Double) -> String { format(top + plotHeight - y / yMax * plotHeight) }

        var svg = "<svg class=\"chart\" preserveAspectRatio=\"xMinYMin meet\" "
        svg += "viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(escape(title))\">\n"
        svg += "<text class=\"title\" x=\"\(Int(left))\" y=\"16\">\(escape(title))</text>\n"
        for value in yAxis.ticks {
            svg += "<line x1=\"\(Int(left))\" x2=\"\(format(width - right))\" y1=\"\(py(value))\" y2=\"\(py(value))\" "
            svg += "stroke=\"#eee\"/>"
            svg +=
                "<text x=\"\(format(left - 6))\" y=\"\(py(value))\" text-anchor=\"end\" dominant-baseline=\"middle\">"
            svg += "\(escape(label(value) + (unit.isEmpty ? "" : " " + unit)))</text>\n"
        }
        func xLabel(_ x: Double) -> String {
            horizontal == .percentile ? percentile(nines: x) : label(x / timeUnit.seconds) + " " + timeUnit.name
        }
        for time in xAxis.ticks {
            svg += "<text x=\"\(px(time))\" y=\"\(format(height - 10))\" text-anchor=\"middle\">"
            svg += "\(escape(xLabel(time)))</text>\n"
        }
        svg += "<line x1=\"\(Int(left))\" x2=\"\(Int(left))\" y1=\"\(Int(top))\" y2=\"\(py(0))\" stroke=\"#999\"/>"
        svg += "<line x1=\"\(Int(left))\" x2=\"\(format(width - right))\" y1=\"\(py(0))\" y2=\"\(py(0))\" "
        svg += "stroke=\"#999\"/>\n"
        if ys.isEmpty {
            svg += "<text x=\"\(format(left + plotWidth / 2))\" y=\"\(format(top + plotHeight / 2))\" "
            svg += "text-anchor=\"middle\">no data</text>\n"
        }
        var legendX = left + 8
        for (name, color, values) in series {
            for segment in segments(values) {
                if segment.count == 1, let only = segment.first {
                    svg += "<circle cx=\"\(px(only.0))\" cy=\"\(py(only.1))\" r=\"2.5\" fill=\"\(color)\"/>\n"
                } else {
                    let coordinates = segment.map { "\(px($0.0)),\(py($0.1))" }.joined(separator: " ")
                    svg +=
                        "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\"\(coordinates)\"/>\n"
                }
            }
            svg += "<rect x=\"\(format(legendX))\" y=\"24\" width=\"10\" height=\"10\" fill=\"\(color)\"/>"
            svg += "<text x=\"\(format(legendX + 14))\" y=\"33\">\(escape(name))</text>\n"
            legendX += 24 + Double(name.count) * 7
        }
        // Values on hover: a transparent column around each point whose tooltip gives every series' value there.
        // Every series' points by their position, over the positions any series has (a percentile line may stop
        // before another, at the depth its samples allow).
        let times = Array(Set(series.flatMap { $0.2.map(\.0) })).sorted()
        let byPosition = series.map { _, _, values in
            Dictionary(values.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
        }
        for (index, time) in times.enumerated() where !ys.isEmpty {
            let low = index == 0 ? time : (times[index - 1] + time) / 2
            let high = index == times.count - 1 ? time : (time + times[index + 1]) / 2
            let values = zip(series, byPosition).map { line, points in
                let name = line.0
                let value = points[time].flatMap { $0 }.flatMap { $0.isFinite ? $0 : nil }
                return "\(name) " + (value.map { reading($0) + (unit.isEmpty ? "" : " " + unit) } ?? "—")
            }
            let x = left + low / xMax * plotWidth
            let band = max((high - low) / xMax * plotWidth, 2)
            svg += "<rect class=\"hover\" x=\"\(format(x - (index == 0 ? 1 : 0)))\" y=\"\(Int(top))\" "
            svg += "width=\"\(format(band))\" height=\"\(format(plotHeight))\" fill=\"transparent\"><title>"
            svg += escape(xLabel(time) + ": " + values.joined(separator: ", "))
            svg += "</title></rect>"
        }
        // After the hover columns, so the line's own tooltip is the one under the pointer.
        if let reference, reference.value.isFinite, !ys.isEmpty {
            svg +=
                "<line class=\"reference\" x1=\"\(Int(left))\" x2=\"\(format(width - right))\" y1=\"\(py(reference.value))\" "
            svg += "y2=\"\(py(reference.value))\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\">"
            svg +=
                "<title>\(escape(reference.name)): \(escape(reading(reference.value) + (unit.isEmpty ? "" : " " + unit)))"
            svg += "</title></line>\n"
            svg += "<line x1=\"\(format(legendX))\" x2=\"\(format(legendX + 12))\" y1=\"29\" y2=\"29\" stroke=\"#555\" "
            svg += "stroke-width=\"1.5\" stroke-dasharray=\"4 2\"/>"
            svg += "<text x=\"\(format(legendX + 16))\" y=\"33\">\(escape(reference.name))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// A percentile axis out to `top` nines, a tick at each whole one.
    private static func nines(_ top: Double) -> (top: Double, ticks: [Double]) {
        (top, Array(stride(from: 0.0, through: top, by: 1)))
    }

    /// `nines` (−log₁₀(1 − q)) as the percentile it stands for: 0 → `0%`, 1 → `90%`, 2 → `99%`, 3 → `99.9%`.
    static func percentile(nines: Double) -> String {
        let q = (1 - pow(10, -nines)) * 100
        // As many decimals as the nines need (99.99 % is not 100 %), none for the body.
        let decimals = max(Int(nines.rounded(.up)) - 2, 0)
        var text = String(format: "%.\(decimals)f", q)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text + "%"
    }

    /// A value as a tooltip reads it: about four significant digits, no trailing `.0`.
    static func reading(_ value: Double) -> String {
        let magnitude = abs(value)
        let digits = magnitude >= 1_000 ? 0 : magnitude >= 100 ? 1 : magnitude >= 10 ? 2 : 3
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        var text = "\((value * scale).rounded() / scale)"
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// Runs of consecutive finite values.
    private static func segments(_ values: [(Double, Double?)]) -> [[(Double, Double)]] {
        var result: [[(Double, Double)]] = []
        var current: [(Double, Double)] = []
        for (x, y) in values {
            if let y, y.isFinite {
                current.append((x, y))
            } else if !current.isEmpty {
                result.append(current)
                current = []
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    /// Round axis ticks from 0 covering `maximum`: a step of 1, 2, 2.5 or 5 × 10^k giving at most five intervals.
    static func axis(_ maximum: Double) -> (top: Double, ticks: [Double]) {
        guard maximum > 0, maximum.isFinite else { return (1, [0, 0.25, 0.5, 0.75, 1]) }
        let rough = maximum / 5
        var magnitude = 1.0
        while magnitude * 10 <= rough { magnitude *= 10 }
        while magnitude > rough { magnitude /= 10 }
        let step = [1.0, 2.0, 2.5, 5.0, 10.0].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude
        let intervals = max(1, Int((maximum / step).rounded(.up)))
        return (Double(intervals) * step, (0...intervals).map { Double($0) * step })
    }

    private static func label(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        if abs(value) >= 10 { return String(Int64(value.rounded())) }
        return String((value * 100).rounded() / 100)
    }

    private static func format(_ value: Double) -> String {
        String((value * 10).rounded() / 10)
    }

    /// Escapes text for HTML content and attribute values.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }
}
