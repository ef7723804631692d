import Foundation

@testable import SkirmishTelemetry

extension Collector {
    /// Prometheus: every sample value of an instant query, or `nil` when the query failed.
    func queryValues(_ promQL: String) -> [Double]? {
        guard let encoded = promQL.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
            let answer = get("/api/v1/query?query=\(encoded)"), answer.status == 200,
            let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { return nil }
        return result.compactMap { ($0["value"] as? [Any])?.last as? String }.compactMap(Double.init)
    }

    /// Prometheus: every sample of a range query from `start` to `end` at `step` seconds, one array per series
    /// (NaN kept, so an empty histogram reads as NaN), or `nil` when the query failed.
    func queryRange(_ promQL: String, start: Date, end: Date, step: Int = 1) -> [[Double]]? {
        guard let encoded = promQL.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
            let answer = get(
                "/api/v1/query_range?query=\(encoded)&start=\(Int(start.timeIntervalSince1970))"
                    + "&end=\(Int(end.timeIntervalSince1970.rounded(.up)))&step=\(step)"),
            answer.status == 200,
            let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]]
        else { return nil }
        return result.map { series in
            (series["values"] as? [[Any]] ?? []).compactMap { ($0.last as? String).flatMap(Double.init) }
        }
    }

    /// Prometheus: the first value of an instant query, polled until it is non-nil (scrapes are periodic).
    func query(_ promQL: String, timeout: TimeInterval = 5) async -> Double? {
        await Collector.poll(timeout: timeout) { queryValues(promQL)?.first }
    }

    /// VictoriaMetrics: the latest exported value of a metric for one run.
    func exportedLatest(name: String, run: String) -> Double? {
        let selector = "{__name__=\"\(name)\",run=\"\(run)\"}"
        guard let encoded = selector.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
            let answer = get("/api/v1/export?match[]=\(encoded)"), answer.status == 200
        else { return nil }
        var total: Double?
        for line in answer.body.split(separator: "\n") {
            guard let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let values = json["values"] as? [Any], let last = values.last
            else { continue }
            let value = (last as? NSNumber)?.doubleValue ?? 0
            total = (total ?? 0) + value
        }
        return total
    }

    /// InfluxDB: `last(value)` and its time for one measurement and run.
    private func influxLastRow(_ measurement: String, run: String) async -> [Any]? {
        let query = "SELECT last(\"value\") FROM \"\(measurement)\" WHERE \"run\"='\(run)'"
        guard let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) else { return nil }
        return await Collector.poll(timeout: 10) { () -> [Any]? in
            guard let answer = get("/query?db=skirmish&epoch=ms&q=\(encoded)"), answer.status == 200,
                let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
                let results = json["results"] as? [[String: Any]],
                let series = results.first?["series"] as? [[String: Any]],
                let values = series.first?["values"] as? [[Any]]
            else { return nil }
            return values.first
        }
    }

    /// InfluxDB: every numeric value in every series a query returns (nulls skipped).
    func influxValues(_ query: String) -> [Double] {
        guard let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
            let answer = get("/query?db=skirmish&epoch=ms&q=\(encoded)"), answer.status == 200,
            let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
            let results = json["results"] as? [[String: Any]]
        else { return [] }
        let series = results.flatMap { $0["series"] as? [[String: Any]] ?? [] }
        return series.flatMap { ($0["values"] as? [[Any]] ?? []).flatMap { $0.dropFirst() } }
            .compactMap { ($0 as? NSNumber)?.doubleValue }
    }

    func influxLast(_ measurement: String, run: String) async -> Double? {
        await (influxLastRow(measurement, run: run)?.last as? NSNumber)?.doubleValue
    }

    func influxLastTime(_ measurement: String, run: String) async -> Date? {
        await (influxLastRow(measurement, run: run)?.first as? NSNumber).map {
            Date(timeIntervalSince1970: $0.doubleValue / 1_000)
        }
    }
}

/// A short run pushed to Pushgateway and scraped by Prometheus: two pushes, totals 1,000 then 2,000 packets.
struct PrometheusRun {
    let pushgateway: Collector
    let prometheus: Collector
    let source = RunSource(everything: true)
    let exporter: Exporter

    init() async throws {
        pushgateway = try await Collector(.pushgateway)
        prometheus = try await Collector(.prometheus, scrapeTarget: pushgateway.port)
        exporter = source.exporter([try PushTarget(parsing: pushgateway.base, format: .prom)])
        let query = "sum(skirmish_packets_sent_total{run=\"\(source.runID)\"})"
        exporter.start()
        exporter.pushNow()
        guard await prometheus.query(query, timeout: 30) == 1_000 else {
            throw Collector.Failure(description: "first push not scraped: \(exporter.stats.summary)")
        }
        source.set(scale: 2)
        exporter.stop()
        let landed = await Collector.poll(timeout: 30) { prometheus.queryValues(query)?.first == 2_000 ? true : nil }
        guard landed == true else {
            throw Collector.Failure(description: "final push not scraped: \(exporter.stats.summary)")
        }
    }
}
