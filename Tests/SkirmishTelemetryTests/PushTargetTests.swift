import Testing

@testable import SkirmishTelemetry

@Suite struct PushTargetTests {
    @Test(arguments: [
        (MetricsFormat.prom, "http://127.0.0.1:9091/metrics/job/skirmish/run/n1/shard/0"),
        (.vm, "http://127.0.0.1:9091/api/v1/import/prometheus"),
        (.influx, "http://127.0.0.1:9091/write?db=skirmish&precision=ms"),
        (.otlp, "http://127.0.0.1:9091/v1/metrics"),
        (.json, "http://127.0.0.1:9091/api/v1/import"),
    ])
    func bareURLsGetEachCollectorsEndpoint(format: MetricsFormat, endpoint: String) throws {
        let target = try PushTarget(parsing: "http://127.0.0.1:9091", format: format)
        #expect(target.endpoint(runID: "n1", shard: "0") == endpoint)
        #expect(target.name == "\(format.rawValue)@127.0.0.1:9091")
    }

    @Test func credentialsInTheURLBecomeBasicAuthAndLeaveTheURL() throws {
        let target = try PushTarget(
            parsing: "https://ci:s%40cret@vm.example:8428/api/v1/import/prometheus", format: .vm)
        #expect(target.auth == .basic(user: "ci", password: "s@cret"))
        #expect(target.url == "https://vm.example:8428/api/v1/import/prometheus")
        #expect(!target.name.contains("cret"))
    }

    @Test func influxPrecisionIsAlwaysMilliseconds() throws {
        let target = try PushTarget(parsing: "http://h:8086/write?db=soak&precision=s&rp=week", format: .influx)
        #expect(target.url == "http://h:8086/write?db=soak&rp=week&precision=ms")
    }

    @Test func groupingValuesOutsideTheSafeSetUseBase64() throws {
        let target = try PushTarget(parsing: "http://h:9091/metrics/job/skirmish/", format: .prom)
        #expect(
            target.endpoint(runID: "a/b", shard: "")
                == "http://h:9091/metrics/job/skirmish/run@base64/YS9i/shard@base64/=")
        #expect(target.method == "PUT")
    }

    @Test(arguments: ["ftp://h", "http://", "http://h:0", "http://h:99999", "http://h:port", "127.0.0.1:9091"])
    func badURLsAreRejectedWithAHint(url: String) {
        #expect {
            try PushTarget(parsing: url, format: .vm)
        } throws: { error in
            String(describing: error).contains("--push '\(url)'")
                && String(describing: error).contains("http://127.0.0.1:9091")
        }
    }

    @Test func anExporterWithoutTargetsStartsAndStopsAtOnce() {
        let exporter = Exporter(
            targets: [], source: ClosureMetricsSource { Fixtures.snapshot() }, runID: "r", shard: "0")
        exporter.start()
        exporter.pushNow()
        exporter.stop()
        #expect(exporter.stats == ExporterStats())
        #expect(exporter.stats.summary == "exporter: 0 pushes, 0 failures")
    }

    @Test(arguments: [
        ("http://127.0.0.1:9091", MetricsFormat?.some(.prom)),
        ("http://h/metrics/job/nightly", .prom),
        ("http://h:8428", .vm),
        ("https://u:p@vm.example:443/api/v1/import/prometheus", .vm),
        ("http://h:8428/api/v1/import", .json),
        ("http://h:8086/write?db=skirmish", .influx),
        ("http://h:8428/influx/write", .influx),
        ("http://collector:4318/v1/metrics", .otlp),
        ("http://h:8080/hooks/metrics", nil),
        ("http://h:1234", nil),
    ])
    func theFormatIsInferredFromWellKnownPathsAndPorts(url: String, format: MetricsFormat?) {
        #expect(PushTarget.inferredFormat(for: url) == format)
    }

    /// Influx lines for VictoriaMetrics' `/influx/write` take their field from the name (VictoriaMetrics joins
    /// measurement and field), so series keep their names; Influx lines for InfluxDB keep `value=`.
    @Test func influxForVictoriaMetricsTakesTheFieldFromTheName() throws {
        let snapshot = Fixtures.snapshot()
        let vm = try PushTarget(parsing: "http://h:8428/influx/write", format: .influx)
        let influx = try PushTarget(parsing: "http://h:8086/write?db=s", format: .influx)
        #expect(vm.influxFieldFromName && !influx.influxFieldFromName)
        let vmLines = String(decoding: vm.render(snapshot), as: UTF8.self).split(separator: "\n")
        let influxLines = String(decoding: influx.render(snapshot), as: UTF8.self).split(separator: "\n")
        #expect(vmLines.contains { $0.hasPrefix("skirmish_packets_sent,") && $0.contains(" total=1000i ") })
        #expect(vmLines.contains { $0.hasPrefix("skirmish_rtt_seconds,") && $0.contains(" bucket=") })
        #expect(!vmLines.contains { $0.contains(" value=") })
        #expect(influxLines.contains { $0.hasPrefix("skirmish_packets_sent_total,") && $0.contains(" value=1000i ") })
    }
}
