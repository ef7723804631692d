import Foundation
import SkirmishTelemetry

extension RunSummary {
    /// Compares this run with `baseline` (``comparison``) and keeps the baseline's whole-run figures for the
    /// report's charts (``baseline``): what `--baseline` does.
    public mutating func compare(with baseline: RunSummary) {
        comparison = Comparison(base: baseline, new: self)
        // Packets per second as the chart it is drawn on counts them (every persona, from the timeline), the
        // summary's totals (legitimate personas only) when the baseline kept no timeline.
        var figures = [
            "packets_per_second": Double(baseline.packets.sent &+ baseline.packets.received)
                / max(baseline.durationSeconds, 0.001)
        ]
        if let points = baseline.timeline?.points, let last = points.last, last.t > 0 {
            var start = 0.0
            var packets = 0.0
            for point in points {
                packets += point.packetsPerSecond * (point.t - start)
                start = point.t
            }
            figures["packets_per_second"] = packets / last.t
        }
        figures["rtt_p99"] = baseline.latency.rtt?.p99
        figures["snapshot_age_p99"] = baseline.latency.snapshotAge?.p99
        figures["tick_lateness_p99"] = baseline.latency.tickLateness?.p99
        self.baseline = ReportSummary.Baseline(run: baseline.run, figures: figures)
    }

    /// The report's charts beyond the timeline's: the latency distributions by percentile (from the run's exact HDR
    /// histograms), and each persona's round-trip p99 over time (from the per-block samples `compare` uses).
    var reportCharts: [ReportSummary.Chart] {
        typealias Chart = ReportSummary.Chart
        var charts: [Chart] = []
        let distributions = [
            ("round trip", SkirmishMetrics.rtt), ("snapshot age", SkirmishMetrics.snapshotAge),
            ("tick lateness", SkirmishMetrics.tickLateness),
        ]
        let lines = distributions.compactMap { name, family -> Chart.Series? in
            guard let histogram = histograms?[family.name], histogram.count > 0 else { return nil }
            // Out to the last percentile the samples can tell apart from the maximum (99.9 % of 1,000 samples).
            let deepest = min(4, (log10(Double(histogram.count)) * 4).rounded(.down) / 4)
            let points = stride(from: 0.0, through: deepest, by: 0.25).map { nines in
                Chart.Point(x: nines, y: histogram.quantile(1 - pow(10, -nines)).map { $0 * 1_000 })
            }
            return Chart.Series(name, points: points)
        }
        if !lines.isEmpty {
            charts.append(Chart("Latency by percentile", unit: "ms", axis: .percentile, series: lines))
        }
        if let samples {
            var end = 0.0
            var points: [String: [Chart.Point]] = [:]
            let names = personas.map(\.name)
            for block in samples.blocks {
                end += block.seconds
                for name in names {
                    points[name, default: []].append(
                        Chart.Point(x: end, y: block.personas[name]?.rtt?.quantile(0.99).map { $0 * 1_000 }))
                }
            }
            let series = names.compactMap { name in
                points[name].flatMap { $0.contains { $0.y != nil } ? Chart.Series(name, points: $0) : nil }
            }
            if !series.isEmpty {
                charts.append(Chart("Round-trip time p99 by persona", unit: "ms", axis: .time, series: series))
            }
        }
        return charts
    }
}
