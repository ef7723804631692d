import Foundation
import Testing

@testable import SkirmishTelemetry

/// Pushes to real collectors from Debian packages on loopback and reads the numbers back.
@Suite(.serialized) struct CollectorTests {
    /// Pushgateway → Prometheus (honor_labels): PromQL returns the run's counters and a consistent quantile.
    @Test func pushgatewayScrapedByPrometheusGivesBackTheRun() async throws {
        let run = try await PrometheusRun()
        let query = "sum(skirmish_packets_sent_total{run=\"\(run.source.runID)\"})"
        await #expect(run.prometheus.query(query) == 2_000)
        let group = try #require(run.pushgateway.get("/api/v1/metrics"))
        #expect(group.body.contains(run.source.runID))
        // Prometheus interpolates inside one bucket; the run's own HDR median must fall in that same bucket.
        let promMedian = try await #require(
            run.prometheus.query(
                "histogram_quantile(0.5, sum by (le) (skirmish_rtt_seconds_bucket{run=\"\(run.source.runID)\"}))"))
        let ownMedian = try #require(run.source.collect().histogramQuantile(SkirmishMetrics.rtt, 0.5))
        let bounds = HistogramScale.seconds.bounds
        let upper = try #require(bounds.first { $0 >= ownMedian })
        let lower = bounds.last { $0 < ownMedian } ?? 0
        #expect(promMedian > lower && promMedian <= upper, "Prometheus \(promMedian) vs HDR \(ownMedian)")
        #expect(run.exporter.stats.totalFailures == 0, "\(run.exporter.stats.summary)")
    }

    /// Each Pushgateway the tests start begins empty and leaves nothing behind: a group pushed to one is gone
    /// from the next (Debian's default would persist it to /var/lib and hand it to every later run).
    @Test func pushgatewayKeepsNoGroupAcrossInstances() async throws {
        let first = try await Collector(.pushgateway)
        let source = RunSource()
        let exporter = source.exporter([try PushTarget(parsing: first.base, format: .prom)])
        exporter.start()
        exporter.pushNow()
        #expect(exporter.waitForStats(timeout: .seconds(10)) { $0.pushes >= 1 }, "\(exporter.stats.summary)")
        exporter.stop(finalPush: false)
        #expect(first.get("/api/v1/metrics")?.body.contains(source.runID) == true)
        first.stop()
        #expect(!FileManager.default.fileExists(atPath: first.directory.path), "the data directory stays behind")
        let second = try await Collector(.pushgateway)
        let groups = try #require(second.get("/api/v1/metrics"))
        #expect(groups.status == 200)
        #expect(!groups.body.contains(source.runID), "a new Pushgateway still holds the last run's group")
    }

    /// VictoriaMetrics: Prometheus text with timestamps, JSON lines and Influx lines all read back exactly, under
    /// the names the dashboards use.
    @Test func victoriaMetricsReadsBackExactTotalsWithNoInvalidRows() async throws {
        let vm = try await Collector(.victoriaMetrics)
        for (format, path) in [(MetricsFormat.vm, ""), (.json, ""), (.influx, "/influx/write")] {
            let source = RunSource()
            let exporter = source.exporter([try PushTarget(parsing: vm.base + path, format: format)])
            exporter.start()
            exporter.pushNow()
            #expect(exporter.waitForStats(timeout: .seconds(10)) { $0.pushes >= 1 }, "\(exporter.stats.summary)")
            source.set(scale: 2)
            exporter.stop()
            #expect(exporter.stats.totalFailures == 0, "\(format): \(exporter.stats.summary)")
            // Influx lines keep the name too: the field is the name's last part (VictoriaMetrics joins them).
            let name = "skirmish_packets_sent_total"
            let latest = await Collector.poll { () -> Double? in
                _ = vm.get("/internal/force_flush")
                return vm.exportedLatest(name: name, run: source.runID).flatMap { $0 == 2_000 ? $0 : nil }
            }
            #expect(
                latest == 2_000, "\(format): \(vm.get("/api/v1/export?match[]={run=\"\(source.runID)\"}")?.body ?? "")")
            // The dashboards' percentile query works on every format's series, Influx lines included.
            let median = await Collector.poll(timeout: 10) {
                vm.queryValues(
                    "histogram_quantile(0.5, sum by (le) (skirmish_rtt_seconds_bucket{run=\"\(source.runID)\"}))")?
                    .first
            }
            #expect(median.map { $0 > 0.01 && $0 < 0.06 } == true, "\(format): median \(median ?? .nan)")
        }
        let invalid = vm.get("/metrics")?.body.split(separator: "\n")
            .filter { $0.hasPrefix("vm_rows_invalid_total") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
        #expect(invalid?.isEmpty == false)
        #expect(invalid?.reduce(0, +) == 0)
    }

    /// InfluxDB 1.x: line protocol with precision=ms reads back the exact final counters and histogram counts.
    @Test func influxDBReadsBackExactTotals() async throws {
        let influx = try await Collector(.influxdb)
        guard case .accepted = influx.post("/query", body: "q=CREATE%20DATABASE%20skirmish") else {
            Issue.record("could not create the database: \(influx.log)")
            return
        }
        let source = RunSource()
        let exporter = source.exporter([try PushTarget(parsing: influx.base, format: .influx)])
        exporter.start()
        exporter.pushNow()
        #expect(exporter.waitForStats(timeout: .seconds(10)) { $0.pushes >= 1 }, "\(exporter.stats.summary)")
        source.set(scale: 2)
        exporter.stop()
        #expect(exporter.stats.totalFailures == 0, "\(exporter.stats.summary)")
        let sent = await influx.influxLast("skirmish_packets_sent_total", run: source.runID)
        #expect(sent == 2_000)
        await #expect(influx.influxLast("skirmish_rtt_seconds_count", run: source.runID) == 200)
        // Timestamps are milliseconds: the point is from today, not from 1970.
        let time = await influx.influxLastTime("skirmish_packets_sent_total", run: source.runID)
        #expect(time.map { abs($0.timeIntervalSinceNow) < 600 } == true, "\(String(describing: time))")
    }

    /// OTLP JSON parses with the official opentelemetry-proto package into an ExportMetricsServiceRequest.
    @Test func otlpPayloadParsesWithTheOfficialProtobufParser() async throws {
        let payload = MetricsRenderer.render(Fixtures.snapshot(), as: .otlp)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-otlp-\(UUID()).json")
        try Data(payload).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import sys
            try:
                from google.protobuf import json_format
                from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
            except ImportError as error:
                print('missing python package (make test installs opentelemetry-proto):', error); sys.exit(2)
            request = json_format.Parse(open(sys.argv[1]).read(), metrics_service_pb2.ExportMetricsServiceRequest())
            for metric in request.resource_metrics[0].scope_metrics[0].metrics:
                kind = metric.WhichOneof('data')
                point = getattr(metric, kind).data_points[0]
                extra = ''
                if kind == 'sum':
                    extra = f'{point.as_int} {metric.sum.is_monotonic} {metric.sum.aggregation_temporality}'
                if kind == 'histogram':
                    extra = f'{point.count} {sum(point.bucket_counts)} {len(point.explicit_bounds)}'
                print(metric.name, kind, extra)
            """
        let result = try await Command.run("/usr/bin/env", ["python3", "-c", script, file.path])
        #expect(result.status == 0, "\(result.output)")
        let lines = Set(result.output.split(separator: "\n").map(String.init))
        #expect(lines.contains("skirmish_packets_sent_total sum 1000 True 2"), "\(result.output)")
        #expect(lines.contains("skirmish_bots_connected gauge "), "\(result.output)")
        let bounds = HistogramScale.seconds.bounds.count
        #expect(lines.contains("skirmish_rtt_seconds histogram 100 100 \(bounds)"), "\(result.output)")
    }

    /// A collector down for the first pushes: failures are counted, the final totals still arrive whole.
    @Test func collectorDownForPartOfTheRunLosesNothing() async throws {
        let port = try Collector.freePort()
        let source = RunSource()
        let exporter = source.exporter([try PushTarget(parsing: "http://127.0.0.1:\(port)", format: .vm)])
        exporter.start()
        exporter.pushNow()
        let key = ExporterStats.FailureKey(target: "vm@127.0.0.1:\(port)", reason: "connect")
        #expect(
            exporter.waitForStats(timeout: .seconds(10)) { ($0.failures[key] ?? 0) >= 2 }, "\(exporter.stats.summary)")
        // While it fails the live line says so; the first accepted push clears it.
        #expect(exporter.stats.liveStatus?.contains("vm@127.0.0.1:\(port) connect") == true)
        let vm = try await Collector(.victoriaMetrics, port: port)
        exporter.pushNow()
        #expect(exporter.waitForStats(timeout: .seconds(20)) { $0.pushes >= 1 }, "\(exporter.stats.summary)")
        #expect(exporter.stats.liveStatus == nil, "\(exporter.stats.liveStatus ?? "")")
        source.set(scale: 3)
        exporter.stop()
        #expect(exporter.stats.pushes >= 1, "\(exporter.stats.summary)")
        let latest = await Collector.poll { () -> Double? in
            _ = vm.get("/internal/force_flush")
            return vm.exportedLatest(name: "skirmish_packets_sent_total", run: source.runID).flatMap {
                $0 == 3_000 ? $0 : nil
            }
        }
        #expect(latest == 3_000)
        // The exporter's own failure counter reached the collector with the final push.
        let failures = vm.exportedLatest(name: "skirmish_exporter_failures_total", run: source.runID)
        #expect((failures ?? 0) >= 2)
    }

    /// A collector that answers 500: the answer is read and reported, retries land the cumulative totals.
    @Test func collectorAnswering500IsRetriedAndReported() async throws {
        let stub = try await StubCollector(failures: 2)
        let source = RunSource()
        let exporter = source.exporter([try PushTarget(parsing: "http://127.0.0.1:\(stub.port)", format: .prom)])
        exporter.start()
        exporter.pushNow()
        #expect(exporter.waitForStats(timeout: .seconds(10)) { $0.pushes >= 1 }, "\(exporter.stats.summary)")
        source.set(scale: 5)
        exporter.stop()
        let stats = exporter.stats
        #expect(
            stats.failures[ExporterStats.FailureKey(target: "prom@127.0.0.1:\(stub.port)", reason: "http_500")] == 2)
        #expect(stats.lastError?.contains("HTTP 500: boom: partial write") == true, "\(stats.summary)")
        let body = try #require(stub.lastAccepted)
        #expect(body.contains("type=\"paddle_state\",delivery=\"unreliable\"} 5000\n"))
    }

    /// A collector that never answers: the caller never waits, timeouts are counted, stop is bounded.
    @Test func slowCollectorNeverBlocksTheCaller() async throws {
        let stub = try await StubCollector(failures: 0, slow: true)
        let source = RunSource()
        let target = try PushTarget(parsing: "http://127.0.0.1:\(stub.port)", format: .vm, timeout: .milliseconds(300))
        let exporter = source.exporter(
            [target],
            configuration: ExporterConfiguration(backoffBase: .milliseconds(50), finalPushTimeout: .seconds(1)))
        let clock = ContinuousClock()
        let callerTime = clock.measure {
            exporter.start()
            for _ in 0..<100 { exporter.pushNow() }
        }
        #expect(callerTime < .milliseconds(100))
        let key = ExporterStats.FailureKey(target: target.name, reason: "timeout")
        #expect(
            exporter.waitForStats(timeout: .seconds(10)) { ($0.failures[key] ?? 0) >= 2 }, "\(exporter.stats.summary)")
        let stopTime = clock.measure { exporter.stop() }
        #expect(stopTime < .seconds(3))
        #expect(exporter.stats.pushes == 0)
    }

    /// The end-of-run OpenMetrics file loads into a TSDB block with promtool; the push text passes its linter.
    @Test func openMetricsLoadsWithPromtool() async throws {
        let promtool = try Collector.binary(.promtool)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-om-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("metrics.om")
        let now = Int64(Date().timeIntervalSince1970 * 1_000)
        try Data(MetricsRenderer.renderOpenMetrics(Fixtures.snapshot(at: now))).write(to: file)
        let blocks = directory.appendingPathComponent("blocks")
        let result = try await Command.run(
            promtool, ["tsdb", "create-blocks-from", "openmetrics", file.path, blocks.path])
        #expect(result.status == 0, "\(result.output)")
        let made = (try? FileManager.default.contentsOfDirectory(atPath: blocks.path)) ?? []
        #expect(made.contains { $0.count == 26 }, "no block in \(made): \(result.output)")

        let prom = directory.appendingPathComponent("metrics.prom")
        try Data(MetricsRenderer.render(Fixtures.snapshot(at: now), as: .prom)).write(to: prom)
        let lint = try await Command.run("/bin/sh", ["-c", "\(promtool) check metrics < '\(prom.path)'"])
        #expect(lint.status == 0, "\(lint.output)")
    }
}
