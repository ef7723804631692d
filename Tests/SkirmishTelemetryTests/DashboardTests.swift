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

    @Test func everyPromQLExpressionPassesPromtoolCheckRules() throws {
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
        let result = try Command.run(promtool, ["check", "rules", file.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("\(count) rules found"), "\(result.output)")
    }

    /// Every panel query returns non-empty, non-zero data from a real Prometheus at the end of a short run.
    @Test func everyPromQLExpressionReturnsDataAfterAShortRun() throws {
        let run = try PrometheusRun()
        for panel in try Self.load("skirmish-prometheus.json").panels {
            for expr in panel.queries {
                let query = Self.promQL(expr, run: run.source.runID)
                let values = Collector.poll(timeout: 10) { () -> [Double]? in
                    guard let values = run.prometheus.queryValues(query),
                        values.contains(where: { $0 != 0 && $0.isFinite })
                    else { return nil }
                    return values
                }
                #expect(values != nil, "\(panel.title): \(query) → \(run.prometheus.queryValues(query) ?? [])")
            }
        }
    }

    /// Every InfluxQL panel query returns a non-zero value from a real InfluxDB after two pushes 10 s apart.
    @Test func everyInfluxQLQueryReturnsDataAfterAShortRun() throws {
        let influx = try Collector(.influxdb)
        guard case .accepted = influx.post("/query", body: "q=CREATE%20DATABASE%20skirmish") else {
            Issue.record("could not create the database: \(influx.log)")
            return
        }
        let source = RunSource(everything: true)
        source.set(offsetMs: -10_000)
        let exporter = source.exporter([try PushTarget(parsing: influx.base, format: .influx)])
        exporter.start()
        exporter.pushNow()
        #expect(exporter.waitForStats(timeout: .seconds(10)) { $0.pushes >= 1 }, "\(exporter.stats.summary)")
        source.set(offsetMs: 0)
        source.set(scale: 2)
        exporter.stop()
        #expect(exporter.stats.totalFailures == 0, "\(exporter.stats.summary)")
        for panel in try Self.load("skirmish-influxdb.json").panels {
            for raw in panel.queries {
                let query = raw.replacingOccurrences(of: "$timeFilter", with: "time > now() - 5m")
                    .replacingOccurrences(of: "$__interval", with: "1s").replacingOccurrences(
                        of: "$run", with: source.runID
                    )
                    .replacingOccurrences(of: "$shard", with: ".*")
                let found = Collector.poll(timeout: 10) { () -> Bool? in
                    influx.influxValues(query).contains { $0 != 0 } ? true : nil
                }
                #expect(found == true, "\(panel.title): \(query) → \(influx.influxValues(query))")
            }
        }
    }
}
