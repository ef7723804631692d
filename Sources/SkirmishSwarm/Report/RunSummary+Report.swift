import Foundation
import SkirmishTelemetry

/// The report page's headline figures and tables, built from the summary alone so `skirmish report summary.json`
/// rebuilds the same page.
extension RunSummary {
    /// The few figures a load-test report leads with; a figure nobody measured gets no card.
    var reportHeadline: [ReportSummary.Entry] {
        let rate = durationSeconds > 0 ? Double(packets.sent + packets.received) / durationSeconds : 0
        var entries = [ReportSummary.Entry("peak bots", "\(peakBots)")]
        if let matchesCompleted {
            entries.append(ReportSummary.Entry("matches completed", Self.count(matchesCompleted)))
        }
        entries.append(ReportSummary.Entry("packets/s (mean)", String(format: "%.0f", rate)))
        if let rtt = latency.rtt { entries.append(ReportSummary.Entry("rtt p99", Self.ms(rtt.p99))) }
        if let age = latency.snapshotAge { entries.append(ReportSummary.Entry("snapshot age p99", Self.ms(age.p99))) }
        if let desyncs { entries.append(ReportSummary.Entry("desyncs", Self.count(desyncs))) }
        entries.append(ReportSummary.Entry("errors", Self.count(errors.values.reduce(0, +))))
        if let exporter {
            entries.append(ReportSummary.Entry("exporter failures", Self.count(exporter.failures)))
        }
        if let traffic = botBytesPerSecond, traffic.sent.samples > 0 {
            // `589 / 595 B/s`: the unit once when both share it, so the card stays narrow.
            var out = RateFigures.format(traffic.sent.p50)
            let into = RateFigures.format(traffic.received.p50)
            if let unit = out.split(separator: " ").last, into.hasSuffix(" " + unit) {
                out.removeLast(unit.count + 1)
            }
            entries.append(ReportSummary.Entry("per bot out / in p50", out + " / " + into))
        }
        return entries
    }

    /// Per persona, per game, latencies, errors, server rejections, exporter health and the server's own figures.
    /// A figure a persona did not measure is `—` in its row; a distribution nobody measured is marked so.
    var reportTables: [ReportSummary.Table] {
        typealias Table = ReportSummary.Table
        var tables: [Table] = []
        // A script with scenarios says which each persona belongs to.
        let scenarios = personas.contains { $0.scenario != nil }
        tables.append(
            Table(
                "Personas",
                columns: ["persona"] + (scenarios ? ["scenario"] : []) + [
                    "game", "behaviour", "peak bots", "matches done", "pkts/s", "rtt p50", "rtt p95",
                    "rtt p99", "age p99", "late p99", "desyncs", "errors",
                ],
                rows: personas.map { persona in
                    [persona.name] + (scenarios ? [persona.scenario ?? "—"] : []) + [
                        persona.game, persona.behavior, "\(persona.peakBots)",
                        Self.count(persona.matchesCompleted), String(format: "%.0f", persona.packetsPerSecond),
                        Self.ms(persona.rtt?.p50), Self.ms(persona.rtt?.p95), Self.ms(persona.rtt?.p99),
                        Self.ms(persona.snapshotAgeP99), Self.ms(persona.tickLatenessP99), Self.count(persona.desyncs),
                        Self.count(persona.errors),
                    ]
                }, wide: true, empty: "no persona ran"))
        let gamesTable = Table(
            "Games", columns: ["game", "matches started", "completed", "desyncs", "desyncs by part"],
            rows: games.sorted { $0.key < $1.key }.map { name, game in
                let parts = game.desyncsByPart.filter { $0.value > 0 }.sorted { $0.key < $1.key }
                return [
                    name, Self.count(game.matchesStarted), Self.count(game.matchesCompleted), Self.count(game.desyncs),
                    parts.isEmpty ? "—" : parts.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                ]
            }, empty: "no game played")
        let distributions: [(String, Percentiles?, (Double?) -> String)] = [
            ("round trip", latency.rtt, Self.ms), ("snapshot age", latency.snapshotAge, Self.ms),
            ("snapshot interval", latency.snapshotInterval, Self.ms),
            ("tick lateness", latency.tickLateness, Self.ms), ("handshake", latency.handshake, Self.ms),
            ("reconnect", latency.reconnect, Self.ms),
            ("prediction error", predictionErrorPixels, { $0.map { String(format: "%.2f px", $0) } ?? "—" }),
        ]
        let latencyTable = Table(
            "Latency", columns: ["measure", "samples", "p50", "p95", "p99", "max"],
            rows: distributions.compactMap { name, value, format in
                guard let value else {
                    // Summaries from before the interval was kept say nothing about it: no row rather than a claim.
                    if name == "snapshot interval", self.protocol == nil { return nil }
                    return [name, "not measured", "—", "—", "—", "—"]
                }
                return [
                    name, Self.count(value.count), format(value.p50), format(value.p95), format(value.p99),
                    format(value.max),
                ]
            })
        let errorsTable = Table(
            "Errors by kind", columns: ["kind", "count"],
            rows: errors.filter { $0.value > 0 }.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map {
                [$0.key, Self.count($0.value)]
            }, empty: "no errors")
        let exporterTable: Table
        if let exporter {
            var rows = exporter.failuresByReason.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map {
                ["failed: \($0.key)", Self.count($0.value)]
            }
            rows.insert(["pushes accepted", Self.count(exporter.pushes)], at: 0)
            if let last = exporter.lastError { rows.append(["last error", last]) }
            exporterTable = Table("Exporter", columns: ["", "count"], rows: rows)
        } else {
            exporterTable = Table("Exporter", columns: [], rows: [], empty: "no collector (run with --push to push)")
        }
        let trafficTable = Table(
            "Traffic", columns: ["", "sent", "received"],
            rows: [
                ["packets", Self.count(packets.sent), Self.count(packets.received)],
                ["bytes", Self.count(packets.bytesSent), Self.count(packets.bytesReceived)],
                ["lost / resent", Self.count(packets.lost), Self.count(packets.resends)],
            ])
        // In an order that balances the page's three columns: tall tables beside stacks of short ones.
        tables += [latencyTable, errorsTable] + (server.map { [$0.rejectionsTable, $0.table] } ?? [])
        tables += [trafficTable, exporterTable, gamesTable]
        tables.append(bandwidthTable)
        if let checks, !checks.isEmpty {
            tables.append(
                Table(
                    "Checks", columns: ["check", "replies judged", "failed"],
                    rows: checks.sorted { $0.key < $1.key }.map {
                        [$0.key, Self.count($0.value.judged), Self.count($0.value.failed)]
                    }))
        }
        if let comparison { tables.append(comparison.reportTable) }
        return tables
    }
}
