import Foundation

extension RunSummary {
    /// The end-of-run table: one row per persona, the totals per game, then the thresholds and their verdicts.
    ///
    /// A figure a persona did not measure is `—` in its row, and a run-wide figure nobody measured is left out of the
    /// lines below and named once in a "not measured" line, so no 0 stands for something nobody counted.
    public func table() -> String {
        var lines: [String] = []
        let status = interrupted ? " (stopped early)" : ""
        lines.append(
            "run \(run) — \(settings.script), \(Self.seconds(durationSeconds))\(status), peak \(peakBots) bots, "
                + "target \(settings.target)")
        if let shards {
            // A merged run: each shard's own verdict, judged on its bots alone, beside the run's.
            let verdicts = shards.map { shard in
                let health = shard.healthPassed == false ? ", health FAILED" : ""
                return "\(shard.shard) \(shard.passed ? "passed" : "FAILED")\(health)"
            }
            let missing = missingShards.map { " — missing \($0.map(String.init).joined(separator: ", "))" } ?? ""
            let windows =
                thresholds.contains { $0.windowSeconds != nil }
                ? "; windowed thresholds judged each shard's windows" : ""
            lines.append("merged from \(shards.count) shards: \(verdicts.joined(separator: ", "))\(missing)\(windows)")
        }
        lines.append("")
        let header = [
            "persona", "game", "bots", "matches", "pkts/s", "rtt p50", "p95", "p99", "age p99", "late p99", "desyncs",
            "errors",
        ]
        // A script with scenarios says which each persona belongs to.
        let scenarios = personas.contains { $0.scenario != nil }
        var rows: [[String]] = [scenarios ? [header[0], "scenario"] + header.dropFirst() : header]
        for persona in personas {
            rows.append(
                [persona.name] + (scenarios ? [persona.scenario ?? "—"] : []) + [
                    persona.game, "\(persona.peakBots)", Self.count(persona.matchesCompleted),
                    String(format: "%.0f", persona.packetsPerSecond), Self.ms(persona.rtt?.p50),
                    Self.ms(persona.rtt?.p95),
                    Self.ms(persona.rtt?.p99), Self.ms(persona.snapshotAgeP99), Self.ms(persona.tickLatenessP99),
                    Self.count(persona.desyncs), "\(persona.errors)",
                ])
        }
        lines += Self.align(rows)
        lines.append("")
        for (name, game) in games.sorted(by: { $0.key < $1.key }) {
            var parts: [String] = []
            if let started = game.matchesStarted, let completed = game.matchesCompleted {
                parts.append(
                    "\(Self.count(started)) matches started, \(Self.count(completed)) completed (each player counts "
                        + "its own)")
            }
            if let desyncs = game.desyncs {
                var part = "\(Self.count(desyncs)) desyncs"
                if !game.desyncsByPart.isEmpty {
                    part +=
                        " ("
                        + game.desyncsByPart.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                        .joined(separator: ", ") + ")"
                }
                parts.append(part)
            }
            if !parts.isEmpty { lines.append("\(name): " + parts.joined(separator: ", ")) }
        }
        if let first = desyncEpisodes?.first {
            let delay = first.detectionSeconds.map { ", detected after \(Self.ms($0))" } ?? ""
            lines.append(
                "first desync: bot \(first.bot) (\(first.persona)), match \(first.match), tick "
                    + "\(first.tick.map { "\($0)" } ?? "none"), \(first.part): expected \(first.expected), "
                    + "observed \(first.observed)\(delay) — every episode is in the log and summary.json")
        }
        lines.append(
            "packets: \(Self.count(packets.sent)) sent, \(Self.count(packets.received)) received"
                + (packets.lost.map { ", \(Self.count($0)) lost" } ?? "")
                + (packets.resends.map { ", \(Self.count($0)) resent" } ?? "")
                + "; \(Self.bytes(packets.bytesSent)) out, \(Self.bytes(packets.bytesReceived)) in"
        )
        if let line = packetTypesLine { lines.append(line) }
        let latencies = [
            ("rtt", latency.rtt), ("snapshot age", latency.snapshotAge),
            ("snapshot interval", latency.snapshotInterval),
            ("tick lateness", latency.tickLateness), ("handshake", latency.handshake),
        ].compactMap { name, value in value.map { "\(name) p99 \(Self.ms($0.p99))" } }
        let reconnect = latency.reconnect.flatMap { $0.count > 0 ? ["reconnect p99 \(Self.ms($0.p99))"] : nil } ?? []
        let request =
            latency.requestRTT.map {
                ["request rtt p50 \(Self.ms($0.p50)), p99 \(Self.ms($0.p99)) (\(Self.count($0.count)) replies)"]
            } ?? []
        if !latencies.isEmpty || !reconnect.isEmpty || !request.isEmpty {
            lines.append("latency: " + (latencies + reconnect + request).joined(separator: ", "))
        }
        lines += trafficLines
        var predictions: String?
        if let mispredictions {
            predictions =
                (predictionErrorPixels?.count ?? 0) > 0
                ? "; \(Self.count(mispredictions)) of \(Self.count(predictionErrorPixels?.count ?? 0)) puck "
                    + "predictions off by more than 2 px (mispredictions)"
                : "; \(Self.count(mispredictions)) mispredictions"
        }
        lines.append(
            "handshakes: \(handshakes.succeeded) ok, \(handshakes.failed) failed; \(reconnects) reconnects"
                + (predictions ?? ""))
        if !notMeasured.isEmpty {
            lines.append(
                "not measured\(self.protocol.map { " (protocol \($0))" } ?? ""): "
                    + notMeasured.map(\.label).joined(separator: ", "))
        }
        if let generatorBusy, generatorBusy >= 0.5 {
            lines.append(
                String(format: "generator: the busiest bot event loop used %.0f%% of its core", generatorBusy * 100))
        }
        if !errors.isEmpty {
            lines.append(
                "errors: "
                    + errors.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
                    .joined(separator: ", "))
        }
        if let protocolEvents, !protocolEvents.isEmpty {
            lines.append(
                "protocol events: "
                    + protocolEvents.sorted { $0.key < $1.key }.map { "\($0.key) \(Self.count($0.value))" }
                    .joined(separator: ", "))
        }
        if !rogue.isEmpty {
            lines.append(
                "rogue packets sent (not in the figures above): "
                    + rogue.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if let checks, !checks.isEmpty {
            let judged = checks.values.reduce(0) { $0 + $1.judged }
            let failing = checks.filter { $0.value.failed > 0 }.sorted { $0.key < $1.key }
            lines.append(
                "checks: \(Self.count(judged)) replies judged, "
                    + (failing.isEmpty
                        ? "none failed"
                        : "failed: "
                            + failing.map { "\($0.key) \($0.value.failed) of \($0.value.judged)" }
                            .joined(separator: ", ")))
        }
        if let exporter {
            lines.append(
                "exporter: \(exporter.pushes) pushes, \(exporter.failures) failures"
                    + (exporter.lastError.map { " (last: \($0))" } ?? ""))
        }
        if !thresholds.isEmpty {
            lines.append("")
            for verdict in thresholds {
                let value = verdict.value.map { Self.figure($0, for: verdict.name) } ?? "no data"
                lines.append(
                    "\(verdict.passed ? "PASS" : "FAIL")  \(verdict.expression)  (\(verdict.observed(value)))")
            }
        }
        if let aborted { lines.append(aborted.line) }
        if let comparison {
            lines.append("")
            lines.append(comparison.table())
        }
        lines.append(passed ? "all thresholds hold" : "a threshold failed: exit status 99")
        return lines.joined(separator: "\n")
    }

    /// `by type: reliable/ch0 600 sent (21.1 KiB), 600 received (21.1 KiB); …`: every type that moved, by name.
    var packetTypesLine: String? {
        let types = Set(packets.sentByType.keys).union(packets.receivedByType.keys).sorted()
        guard !types.isEmpty else { return nil }
        func side(_ count: UInt64?, _ bytes: UInt64?, _ verb: String) -> String? {
            guard let count, count > 0 else { return nil }
            return "\(Self.count(count)) \(verb)" + (bytes.map { " (\(Self.bytes($0)))" } ?? "")
        }
        return "by type: "
            + types.map { type in
                let sent = side(packets.sentByType[type], packets.bytesSentByType?[type], "sent")
                let received = side(packets.receivedByType[type], packets.bytesReceivedByType?[type], "received")
                return "\(type) " + [sent, received].compactMap { $0 }.joined(separator: ", ")
            }.joined(separator: "; ")
    }

    static func align(_ rows: [[String]]) -> [String] {
        guard let width = rows.first?.count else { return [] }
        let widths = (0..<width).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }.joined(separator: "  ")
        }
    }

    /// The run-wide figures no legitimate persona measured, in ``RunFigure`` order (none for a summary written
    /// before absence was kept, whose every figure was written as measured).
    var notMeasured: [RunFigure] {
        var absent: [RunFigure] = []
        if latency.rtt == nil { absent.append(.rtt) }
        if packets.resends == nil { absent.append(.resends) }
        if packets.lost == nil { absent.append(.loss) }
        if latency.snapshotAge == nil { absent.append(.snapshotAge) }
        // Older summaries never kept the interval: only a summary that names its protocol can say it was absent.
        if latency.snapshotInterval == nil, self.protocol != nil { absent.append(.snapshotInterval) }
        if latency.tickLateness == nil { absent.append(.tickLateness) }
        if predictionErrorPixels == nil { absent.append(.prediction) }
        if desyncs == nil { absent.append(.desyncs) }
        if matchesStarted == nil { absent.append(.matches) }
        return absent
    }

    /// A count with thousands separators, or `—` when it was not measured.
    static func count(_ value: UInt64?) -> String {
        value.map { count($0) } ?? "—"
    }

    static func ms(_ seconds: Double?) -> String {
        guard let seconds else { return "—" }
        return seconds < 0.01 ? String(format: "%.2f ms", seconds * 1_000) : String(format: "%.1f ms", seconds * 1_000)
    }

    static func seconds(_ value: Double) -> String { String(format: "%.1f s", value) }

    /// A count with thousands separators (`1,050,879`), locale-independent.
    static func count(_ value: UInt64) -> String {
        let digits = String(value)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return grouped
    }

    static func bytes(_ value: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1_024, unit < units.count - 1 {
            amount /= 1_024
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(format: "%.1f ", amount) + units[unit]
    }

    /// A threshold's measured value in the unit it is written in.
    static func figure(_ value: Double, for name: String) -> String {
        if name.hasPrefix("prediction_error") { return String(format: "%.2f px", value) }
        if name.hasSuffix("rate") { return String(format: "%.3f%%", value * 100) }
        if name.contains("_p") || name.hasSuffix("_max") { return ms(value) }
        return String(format: "%.0f", value)
    }
}

extension RunSummary.Verdict {
    /// `measured 41.2 ms`, or for a windowed threshold its windows and the first that failed, or why nothing was
    /// judged when no persona measured the figure.
    func observed(_ value: String) -> String {
        if measured == false {
            let what = figure.flatMap(RunFigure.init(rawValue:))?.label ?? name
            if let filter, !filter.isEmpty {
                let scope = filter.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                return "not measured: nothing in \(scope) measures \(what); filter on a persona or game that does"
            }
            return "not measured: no persona's protocol or behaviour measures \(what); remove the threshold or run a "
                + "protocol that measures it"
        }
        guard let judged = windowsJudged else { return "measured \(value)" }
        guard judged > 0 else { return "no window with data" }
        var text = "worst of \(judged) windows \(value)"
        if let failed = windowsFailed, failed > 0, let first = firstFailingWindow {
            text +=
                "; \(failed) failed, first \(RunSummary.seconds(first.windowStartSeconds))–"
                + "\(RunSummary.seconds(first.windowEndSeconds)) with \(first.figure)"
        }
        return text
    }
}

extension ThresholdJudge.Breach {
    /// The failing figure in its unit, or `no sample` for a stalled window.
    var figure: String {
        value.map { RunSummary.figure($0, for: threshold.split(separator: " ").first.map(String.init) ?? "") }
            ?? "no sample while bots were connected"
    }

    /// `aborted at 12.0 s: rtt_p99 < 20ms over every 2s window failed (abort_on_fail), measured 102.3 ms over …`.
    var line: String {
        "aborted at \(RunSummary.seconds(atSeconds)): \(threshold) failed (abort_on_fail), measured \(figure) over "
            + "\(RunSummary.seconds(windowStartSeconds))–\(RunSummary.seconds(windowEndSeconds))"
    }
}
