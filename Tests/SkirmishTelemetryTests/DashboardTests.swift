import Foundation
import Testing

@testable import SkirmishTelemetry

/// The Grafana dashboards in `dashboards/`: structure, names, and every query against real collectors.
@Suite(.serialized) struct DashboardTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("dashboards")

    struct Panel {
        let id: Int
        let title: String
        let x: Int, y: Int, w: Int, h: Int
        let queries: [String]
    }

    struct Dashboard {
        let variables: [String]
        let panels: [Panel]
    }

    static func load(_ name: String) throws -> Dashboard {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let templating = try #require(json["templating"] as? [String: Any])
        let variables = try #require(templating["list"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        let panels = try #require(json["panels"] as? [[String: Any]]).map { panel -> Panel in
            let grid = panel["gridPos"] as? [String: Int] ?? [:]
            let targets = panel["targets"] as? [[String: Any]] ?? []
            return Panel(
                id: panel["id"] as? Int ?? -1, title: panel["title"] as? String ?? "",
                x: grid["x"] ?? -1, y: grid["y"] ?? -1, w: grid["w"] ?? 0, h: grid["h"] ?? 0,
                queries: targets.compactMap { ($0["expr"] ?? $0["query"]) as? String })
        }
        return Dashboard(variables: variables, panels: panels)
    }

    /// The metric names a query mentions, with histogram suffixes removed.
    static func metricNames(in query: String) -> Set<String> {
        var names = Set<String>()
        var current = ""
        for character in query + " " {
            if character.isLetter || character.isNumber || character == "_" || character == ":" {
                current.append(character)
            } else {
                if current.hasPrefix("skirmish_") {
                    for suffix in ["_bucket", "_sum", "_count"] where current.hasSuffix(suffix) {
                        current.removeLast(suffix.count)
                    }
                    names.insert(current)
                }
                current = ""
            }
        }
        return names
    }

    static func promQL(_ expr: String, run: String) -> String {
        expr.replacingOccurrences(of: "$__rate_interval", with: "1m").replacingOccurrences(of: "$run", with: run)
            .replacingOccurrences(of: "$shard", with: ".*")
    }

    @Test(arguments: ["skirmish-prometheus.json", "skirmish-influxdb.json"])
    func structureIsValid(file: String) throws {
        let dashboard = try Self.load(file)
        #expect(dashboard.variables.contains("run") && dashboard.variables.contains("shard"))
        #expect(dashboard.panels.count >= 12)
        #expect(Set(dashboard.panels.map(\.id)).count == dashboard.panels.count, "panel ids must be unique")
        for panel in dashboard.panels {
            #expect(panel.x >= 0 && panel.y >= 0 && panel.w >= 1 && panel.h >= 1, "\(panel.title)")
            #expect(panel.x + panel.w <= 24, "\(panel.title) overflows the 24-column grid")
            #expect(!panel.queries.isEmpty, "\(panel.title) has no query")
        }
        // No two panels overlap.
        for (index, a) in dashboard.panels.enumerated() {
            for b in dashboard.panels[(index + 1)...] {
                let apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y
                #expect(apart, "\(a.title) overlaps \(b.title)")
            }
        }
    }

    @Test(arguments: ["skirmish-prometheus.json", "skirmish-influxdb.json"])
    func everyMetricNameExists(file: String) throws {
        let known = Set(SkirmishMetrics.all.map(\.name))
        let used = try Self.load(file).panels.flatMap(\.queries).reduce(into: Set<String>()) {
            $0.formUnion(Self.metricNames(in: $1))
        }
        #expect(!used.isEmpty)
        #expect(used.subtracting(known).isEmpty, "unknown names: \(used.subtracting(known).sorted())")
    }

    @Test func everyPromQLExpressionPassesPromtoolCheckRules() async throws {
        let promtool = try Collector.binary(.promtool)
        let panels = try Self.load("skirmish-prometheus.json").panels
        var rules = "groups:\n  - name: dashboard\n    rules:\n"
        var count = 0
        for panel in panels {
            for expr in panel.queries {
                count += 1
                let quoted = Self.promQL(expr, run: ".*").replacingOccurrences(of: "'", with: "''")
                rules += "      - record: dashboard:panel_\(panel.id)_\(count)\n        expr: '\(quoted)'\n"
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-rules-\(UUID()).yml")
        try rules.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await Command.run(promtool, ["check", "rules", file.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("\(count) rules found"), "\(result.output)")
    }

    /// Every percentile panel sums the buckets of every shard (and persona) before taking the quantile: an average
    /// or a maximum of per-shard quantiles is not a quantile of the run.
    @Test func everyPromQLPercentileSumsBucketsFirst() throws {
        let queries = try Self.load("skirmish-prometheus.json").panels.flatMap(\.queries)
            .filter { $0.contains("histogram_quantile") }
        #expect(!queries.isEmpty)
        for query in queries {
            let compact = query.replacingOccurrences(of: " ", with: "")
            #expect(compact.contains(",sumby(le") && compact.contains("_bucket{"), "\(query)")
        }
    }

    /// InfluxQL: `run` and `shard` (a keyword) are always double-quoted identifiers, and the `$shard` regex only
    /// ever meets plain shard indexes (`/` inside `/^…$/` would end the regex).
    @Test func everyInfluxQLQueryQuotesItsTags() throws {
        for query in try Self.load("skirmish-influxdb.json").panels.flatMap(\.queries) {
            var unquoted = ""
            var inQuotes = false
            for character in query {
                if character == "\"" { inQuotes.toggle() } else if !inQuotes { unquoted.append(character) }
            }
            let words = unquoted.split { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "$") }
            #expect(!words.contains("shard") && !words.contains("run"), "\(query)")
        }
    }

    /// The InfluxDB RTT panels add every persona up: two personas' buckets pushed to a real InfluxDB read back as
    /// their sum, not as whichever series InfluxQL's `last` happened to pick.
    @Test func influxRTTPanelsSumEveryPersona() async throws {
        let influx = try await Collector(.influxdb)
        guard case .accepted = influx.post("/query", body: "q=CREATE%20DATABASE%20skirmish") else {
            Issue.record("could not create the database: \(influx.log)")
            return
        }
        let runID = "rtt-" + UUID().uuidString.prefix(8).lowercased()
        let source = ClosureMetricsSource {
            let shard = MetricsShard(constantLabels: ["run": runID, "shard": "0"])
            for (persona, count) in [("chaser", 100), ("defender", 300)] {
                let id = shard.histogram(SkirmishMetrics.rtt, ["game": "puck", "persona": persona])
                for step in 0..<count { shard.record(id, seconds: 0.002 + Double(step % 10) * 0.001) }
            }
            return shard.snapshot(at: Int64(Date().timeIntervalSince1970 * 1_000))
        }
        let exporter = Exporter(
            targets: [try PushTarget(parsing: influx.base, format: .influx)], source: source,
            interval: .seconds(3_600), runID: runID, shard: "0")
        exporter.start()
        exporter.pushNow()
        #expect(exporter.waitForStats(timeout: .seconds(10)) { $0.pushes >= 1 }, "\(exporter.stats.summary)")
        exporter.stop(finalPush: false)
        let panel = try #require(try Self.load("skirmish-influxdb.json").panels.first { $0.title.contains("buckets") })
        let query = try #require(panel.queries.first).replacingOccurrences(of: "$timeFilter", with: "time > now() - 5m")
            .replacingOccurrences(of: "$__interval", with: "1m").replacingOccurrences(of: "$run", with: runID)
            .replacingOccurrences(of: "$shard", with: ".*")
        let largest = await Collector.poll(timeout: 10) { influx.influxValues(query).max() }
        #expect(largest == 400, "\(query) → \(influx.influxValues(query))")
    }

    /// Panels that must read 0 on a clean loopback run: their series exist (a flat 0, not "No data") and are 0.
    static let zeroOnACleanRun: Set<String> = [
        "Desyncs by game", "Desyncs", "Exporter failures", "Checks failed by check", "Checks failed",
    ]
    /// Panels whose series must exist but may be 0 (or, on a loaded machine, not): errors, rejections, reconnects.
    static let mayBeZero: Set<String> = [
        "Errors by kind", "Errors", "Server rejections by reason", "Server rejections", "Reconnects",
    ]
    /// Panels of figures SNAP does not measure (snapshot intervals, protocol events): after a SNAP run their series
    /// do not exist, so the panel reads "No data" — not measured — and never a flat 0.
    static let absentInASnapRun: Set<String> = ["Snapshot interval", "Mean snapshot interval", "Protocol events"]

    /// The panels of figures only some protocols measure read their series: a run's every family pushed twice to
    /// Pushgateway (scraped by Prometheus) and to InfluxDB, and each such panel's every query has non-zero data.
    @Test func panelsOfFiguresSnapDoesNotMeasureReadTheirSeries() async throws {
        let pushgateway = try await Collector(.pushgateway)
        let prometheus = try await Collector(.prometheus, scrapeTarget: pushgateway.port)
        let influx = try await Collector(.influxdb)
        guard case .accepted = influx.post("/query", body: "q=CREATE%20DATABASE%20skirmish") else {
            Issue.record("could not create the database: \(influx.log)")
            return
        }
        let source = RunSource(everything: true)
        let exporter = source.exporter([
            try PushTarget(parsing: pushgateway.base, format: .prom),
            try PushTarget(parsing: influx.base + "/write?db=skirmish", format: .influx),
        ])
        let started = Date()
        let events = "sum(skirmish_protocol_events_total{run=\"\(source.runID)\"})"
        exporter.start()
        defer { exporter.stop(finalPush: false) }
        // Two pushes, the second with every total doubled and stamped 2 s later: rates and derivatives need two points.
        exporter.pushNow()
        #expect(await prometheus.query(events, timeout: 30) == 100, "\(exporter.stats.summary)")
        source.set(scale: 2)
        source.set(offsetMs: 2_000)
        exporter.pushNow()
        let doubled = await Collector.poll(timeout: 30) { prometheus.queryValues(events)?.first == 200 ? true : nil }
        try #require(doubled == true, "the second push never reached Prometheus: \(exporter.stats.summary)")

        let window = (start: started.addingTimeInterval(-5), end: Date().addingTimeInterval(3))
        let promPanels = try Self.load("skirmish-prometheus.json").panels.filter {
            Self.absentInASnapRun.contains($0.title)
        }
        #expect(promPanels.count == 2)
        for panel in promPanels {
            for expr in panel.queries {
                let query = Self.promQL(expr, run: source.runID)
                let values = await Collector.poll(timeout: 10) { () -> [Double]? in
                    let values = (prometheus.queryRange(query, start: window.start, end: window.end) ?? []).flatMap {
                        $0
                    }
                    return values.contains { $0 != 0 && $0.isFinite } ? values : nil
                }
                #expect(values != nil, "\(panel.title): no non-zero data for \(query)")
            }
        }
        let influxPanels = try Self.load("skirmish-influxdb.json").panels.filter {
            Self.absentInASnapRun.contains($0.title)
        }
        #expect(influxPanels.count == 2)
        for panel in influxPanels {
            for raw in panel.queries {
                let query = raw.replacingOccurrences(of: "$timeFilter", with: "time > now() - 10m")
                    .replacingOccurrences(of: "$__interval", with: "1s")
                    .replacingOccurrences(of: "$run", with: source.runID).replacingOccurrences(of: "$shard", with: ".*")
                let values = await Collector.poll(timeout: 10) { () -> [Double]? in
                    let values = influx.influxValues(query)
                    return values.contains { $0 != 0 } ? values : nil
                }
                #expect(values != nil, "\(panel.title): no non-zero data for \(query)")
            }
        }
    }

    /// Every panel of both dashboards after a real short run (the `skirmish` executable, its embedded server, a
    /// mixed Puck/Snap/Suns swarm) pushing to Pushgateway (scraped by Prometheus) and to InfluxDB: every query
    /// has data over the run; the panels that should move are non-zero; desyncs, failed checks and exporter failures
    /// exist and are 0; errors, rejections and reconnects exist; figures SNAP does not measure have no data at all.
    @Test func everyPanelHasDataAfterARealRun() async throws {
        let pushgateway = try await Collector(.pushgateway)
        let prometheus = try await Collector(.prometheus, scrapeTarget: pushgateway.port)
        let influx = try await Collector(.influxdb)
        guard case .accepted = influx.post("/query", body: "q=CREATE%20DATABASE%20skirmish") else {
            Issue.record("could not create the database: \(influx.log)")
            return
        }
        let run = try await RealRun.run([
            "--push", pushgateway.base, "--format", "prom",
            "--push", influx.base + "/write?db=skirmish", "--format", "influx", "--push-interval", "1",
        ])
        defer { run.remove() }
        try #require(run.status == 0, "exit \(run.status): \(run.stderr)")
        let runID = try #require(try run.summary()["run"] as? String)
        // The final push has reached Prometheus once the exporter's own success counter is scraped at its last value.
        let pushes = try #require(
            (try run.summary()["exporter"] as? [String: Any])?["pushes"] as? Int, "no exporter figures in summary.json")
        let scraped = await Collector.poll(timeout: 30) { () -> Bool? in
            let total = prometheus.queryValues("sum(skirmish_packets_sent_total{run=\"\(runID)\"})")?.first ?? 0
            return total > 0 && (prometheus.queryValues("count(skirmish_exporter_pushes_total)")?.first ?? 0) > 0
                ? true : nil
        }
        #expect(scraped == true, "Pushgateway never reached Prometheus (\(pushes) pushes)")
        let window = (start: run.started.addingTimeInterval(-5), end: Date().addingTimeInterval(1))

        // Series that cannot happen are never created: no bot sends a server's message, no Puck bot a Snap one.
        for impossible in [
            "skirmish_packets_sent_total{type=~\"Welcome|Challenge|TableSnapshot|CardTurned\"}",
            "skirmish_packets_received_total{type=~\"Hello|PaddleState|ClientReady\"}",
            "skirmish_packets_sent_total{game=\"puck\",type=~\"SignInResponse|SunsStrike\"}",
            "skirmish_server_packets_sent_total{type=~\"Hello|PaddleState\"}",
        ] {
            let query = "count(\(impossible.dropLast()),run=\"\(runID)\"})"
            #expect(prometheus.queryValues(query)?.isEmpty == true, "\(query) → \(prometheus.queryValues(query) ?? [])")
        }
        // What alerts need exists at 0 with its labels: desyncs per game, every common error kind, exporter health.
        for needed in [
            "skirmish_desyncs_total{game=\"puck\"}", "skirmish_desyncs_total{game=\"snap\"}",
            "skirmish_errors_total{kind=\"handshake_timeout\"}", "skirmish_errors_total{kind=\"transport\"}",
            "skirmish_exporter_failures_total{reason=\"connect\"}", "skirmish_server_desyncs_total{game=\"suns\"}",
            "skirmish_checks_failed_total{check=\"score_monotonic\"}",
            "skirmish_checks_failed_total{check=\"snap_outcome\"}",
        ] {
            let query = "count(\(needed.dropLast()),run=\"\(runID)\"})"
            #expect((prometheus.queryValues(query)?.first ?? 0) > 0, "\(query) is missing")
        }

        for panel in try Self.load("skirmish-prometheus.json").panels {
            for expr in panel.queries {
                let query = Self.promQL(expr, run: runID)
                let series = prometheus.queryRange(query, start: window.start, end: window.end) ?? []
                let values = series.flatMap { $0 }
                if Self.absentInASnapRun.contains(panel.title) {
                    #expect(values.isEmpty, "\(panel.title): SNAP does not measure it, yet \(query) → \(values)")
                    continue
                }
                #expect(!values.isEmpty, "\(panel.title): no data for \(query)")
                if Self.zeroOnACleanRun.contains(panel.title) {
                    #expect(values.allSatisfy { $0 == 0 }, "\(panel.title): \(query) → \(values.filter { $0 != 0 })")
                } else if !Self.mayBeZero.contains(panel.title) {
                    #expect(values.contains { $0 != 0 && $0.isFinite }, "\(panel.title): \(query) is all 0/NaN")
                }
            }
        }

        for panel in try Self.load("skirmish-influxdb.json").panels {
            for raw in panel.queries {
                let query = raw.replacingOccurrences(of: "$timeFilter", with: "time > now() - 10m")
                    .replacingOccurrences(of: "$__interval", with: "1s").replacingOccurrences(of: "$run", with: runID)
                    .replacingOccurrences(of: "$shard", with: ".*")
                if Self.absentInASnapRun.contains(panel.title) {
                    // Asked after the other panels' data landed (the run's final push included).
                    let values = influx.influxValues(query)
                    #expect(values.isEmpty, "\(panel.title): SNAP does not measure it, yet \(query) → \(values)")
                    continue
                }
                let values = await Collector.poll(timeout: 10) { () -> [Double]? in
                    let values = influx.influxValues(query)
                    return values.isEmpty ? nil : values
                }
                #expect(values != nil, "\(panel.title): no data for \(query)")
                if Self.zeroOnACleanRun.contains(panel.title) {
                    #expect(values?.allSatisfy { $0 == 0 } == true, "\(panel.title): \(query) → \(values ?? [])")
                } else if !Self.mayBeZero.contains(panel.title) {
                    #expect(values?.contains { $0 != 0 } == true, "\(panel.title): \(query) is all 0")
                }
            }
        }
    }
}
