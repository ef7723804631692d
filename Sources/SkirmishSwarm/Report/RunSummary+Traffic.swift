import Foundation
import SkirmishTelemetry

/// The bandwidth lines of the end-of-run table and the report: per connected bot, and the server's own tick time
/// and per-match bandwidth when it ran embedded (or was scraped).
extension RunSummary {
    /// `out 1.2 KB/s p50, 1.5 KB/s p99; in 4.1 KB/s p50, 4.3 KB/s p99`
    static func trafficText(_ traffic: TrafficFigures) -> String {
        "out \(RateFigures.format(traffic.sent.p50)) p50, \(RateFigures.format(traffic.sent.p99)) p99; "
            + "in \(RateFigures.format(traffic.received.p50)) p50, \(RateFigures.format(traffic.received.p99)) p99"
    }

    /// The table's lines: bandwidth per bot, then the server's tick time and per-match bandwidth.
    var trafficLines: [String] {
        var lines: [String] = []
        if let traffic = botBytesPerSecond, traffic.sent.samples > 0 {
            lines.append(
                "bandwidth per connected bot: \(Self.trafficText(traffic)) "
                    + "(\(Self.count(traffic.sent.samples)) bot-seconds)")
        }
        if let server {
            let perMatch = (server.matchBytesPerSecond ?? [:]).sorted { $0.key < $1.key }
            for (index, (game, traffic)) in perMatch.enumerated() {
                let lead = index == 0 ? "bandwidth per match (server):" : ""
                lines.append(
                    lead.padding(toLength: 30, withPad: " ", startingAt: 0) + "\(game) \(Self.trafficText(traffic))")
            }
            var tick = "server tick: p50 \(Self.ms(server.tickDurationP50)), p99 \(Self.ms(server.tickDurationP99))"
            if let longest = server.tickDurationMax { tick += ", max \(Self.ms(longest))" }
            lines.append(tick + " (a 60 Hz tick has 16.7 ms)")
        }
        return lines
    }

    /// The report's "Bandwidth" table: per connected bot, per persona, and per match on the server, each way.
    var bandwidthTable: ReportSummary.Table {
        var rows: [[String]] = []
        func row(_ name: String, _ traffic: TrafficFigures?) {
            guard let traffic, traffic.sent.samples + traffic.received.samples > 0 else { return }
            rows.append([name, "sent", Self.count(traffic.sent.samples)] + Self.rateCells(traffic.sent))
            rows.append([name, "received", Self.count(traffic.received.samples)] + Self.rateCells(traffic.received))
        }
        row("per bot (all personas)", botBytesPerSecond)
        for persona in personas where personas.count > 1 { row("per bot: \(persona.name)", persona.bytesPerSecond) }
        for (game, traffic) in (server?.matchBytesPerSecond ?? [:]).sorted(by: { $0.key < $1.key }) {
            row("per \(game) match (server)", traffic)
        }
        return ReportSummary.Table(
            "Bandwidth (bytes per second)", columns: ["of", "direction", "samples", "mean", "p50", "p99", "max"],
            rows: rows, wide: true, empty: "no bandwidth sample (no bot stayed connected for a second)")
    }

    static func rateCells(_ rates: RateFigures) -> [String] {
        [rates.mean, rates.p50, rates.p99, rates.max].map(RateFigures.format)
    }
}
