import Foundation
import Testing

@testable import SkirmishTelemetry

@Suite struct ReportTests {
    /// A 60 s run sampled every 5 s: 10 bots per step, 300 packets/s, RTT rising from 20 ms, one desync at 30 s.
    static func timeline() -> RunTimeline {
        var timeline = RunTimeline()
        let metrics = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        let labels: Labels = ["game": "puck", "persona": "chaser"]
        let bots = metrics.gauge(SkirmishMetrics.botsConnected, labels)
        var sentLabels = labels
        sentLabels["type"] = "paddle_state"
        let sent = metrics.counter(SkirmishMetrics.packetsSent, sentLabels)
        let rtt = metrics.histogram(SkirmishMetrics.rtt, labels)
        var desyncLabels = labels
        desyncLabels["part"] = "score"
        let desyncs = metrics.counter(SkirmishMetrics.desyncs, desyncLabels)
        for step in 0...12 {
            metrics.set(bots, Double(min(step, 6) * 10))
            metrics.add(sent, 1_500)
            for sample in 0..<100 { metrics.record(rtt, seconds: 0.020 + Double(step) * 0.005 + Double(sample) * 1e-5) }
            if step == 6 { metrics.add(desyncs) }
            timeline.record(metrics.snapshot(at: Int64(step) * 5_000))
        }
        return timeline
    }

    @Test func timelineComputesIntervalRatesAndPercentiles() throws {
        let points = Self.timeline().points
        #expect(points.count == 13)
        #expect(points.first?.packetsPerSecond == 0)
        #expect(points[1...].allSatisfy { $0.packetsPerSecond == 300 })
        #expect(points.last?.t == 60)
        #expect(points.last?.bots == 60)
        // Interval percentiles follow the rise instead of averaging the whole run.
        let last = try #require(points.last?.rttP50)
        #expect(abs(last - 0.0805) < 0.0005, "\(last)")
        #expect(points[5].desyncs == 0 && points[6].desyncs == 1 && points[12].desyncs == 1)
    }

    @Test func timeCountsFromTheRunsStartAndTheFirstPointHasItsRate() {
        // The first sample comes a second into the run: the axis starts at the run's start, not at that sample.
        var timeline = RunTimeline(startMs: 10_000)
        let metrics = MetricsShard(constantLabels: [:])
        let sent = metrics.counter(SkirmishMetrics.packetsSent, ["game": "puck", "persona": "p", "type": "x"])
        for second in 1...3 {
            metrics.add(sent, 400)
            timeline.record(metrics.snapshot(at: 10_000 + Int64(second) * 1_000))
        }
        #expect(timeline.points.map(\.t) == [1, 2, 3])
        #expect(timeline.points.map(\.packetsPerSecond) == [400, 400, 400])
    }

    @Test func aSnapshotJustAfterTheLastWidensItInsteadOfSpiking() throws {
        // The final snapshot comes 14 ms after the last sample, with the goodbyes' burst: as a point of its own that
        // would be 100 packets over 14 ms, a rate of 7,143/s against a normal 1,000.
        var timeline = RunTimeline(startMs: 0)
        let metrics = MetricsShard(constantLabels: [:])
        let sent = metrics.counter(SkirmishMetrics.packetsSent, ["game": "puck", "persona": "p", "type": "x"])
        let errors = metrics.counter(SkirmishMetrics.errors, ["game": "puck", "persona": "p", "kind": "x"])
        for second in 1...5 {
            metrics.add(sent, 1_000)
            timeline.record(metrics.snapshot(at: Int64(second) * 1_000))
        }
        metrics.add(sent, 100)
        metrics.add(errors)
        timeline.record(metrics.snapshot(at: 5_014))
        #expect(timeline.points.count == 5)
        let last = try #require(timeline.points.last)
        #expect(last.t == 5.014 && last.errors == 1)
        #expect(abs(last.packetsPerSecond - 1_100 / 1.014) < 0.01, "\(last.packetsPerSecond)")
        #expect(timeline.points.map(\.packetsPerSecond).allSatisfy { $0 <= 1_085 })
    }

    @Test func aPercentileChartSpreadsTheTailAndNamesItsPercentiles() throws {
        #expect([0, 1, 2, 3, 4].map { HTMLReport.percentile(nines: $0) } == ["0%", "90%", "99%", "99.9%", "99.99%"])
        #expect(HTMLReport.percentile(nines: 2.5) == "99.7%")
        let chart = ReportSummary.Chart(
            "Latency by percentile", unit: "ms", axis: .percentile,
            series: [.init("round trip", points: (0...12).map { .init(x: Double($0) / 4, y: Double($0 * $0)) })])
        let html = HTMLReport.render(
            timeline: Self.timeline(), summary: ReportSummary(charts: [chart]), title: "percentiles")
        let start = try #require(html.range(of: "aria-label=\"Latency by percentile\""))
        let rest = html[start.upperBound...]
        let svg = rest[..<(rest.range(of: "</svg>")?.lowerBound ?? rest.endIndex)]
        for tick in [">0%<", ">90%<", ">99%<", ">99.9%<"] { #expect(svg.contains(tick), "no \(tick) tick") }
        #expect(svg.contains("<polyline") && svg.contains("<title>99.9%: round trip 144 ms</title>"))
    }

    @Test func aCallerRecordingFasterThanTheShortestIntervalGetsAPointPerSnapshot() {
        // Only a point at least 500 ms wide absorbs a short tail: ten snapshots 100 ms apart are ten points, not one
        // point widening over the whole second.
        var timeline = RunTimeline(startMs: 0)
        let metrics = MetricsShard(constantLabels: [:])
        for step in 1...10 { timeline.record(metrics.snapshot(at: Int64(step) * 100)) }
        #expect(timeline.points.map(\.t) == (1...10).map { Double($0) / 10 })
    }

    @Test func timelineStaysBoundedAndKeepsItsEnds() {
        var timeline = RunTimeline(capacity: 10)
        let metrics = MetricsShard(constantLabels: [:])
        for step in 0..<1_000 { timeline.record(metrics.snapshot(at: Int64(step) * 1_000)) }
        #expect(timeline.points.count <= 10)
        #expect(timeline.points.first?.t == 0)
        #expect(timeline.points.last?.t == 999)
    }

    @Test func timelineRoundTripsThroughJSON() throws {
        let timeline = Self.timeline()
        let decoded = try JSONDecoder().decode(RunTimeline.self, from: JSONEncoder().encode(timeline))
        #expect(decoded == timeline)
    }

    @Test func reportIsSelfContainedWithChartsVerdictsAndEscapedSettings() {
        let summary = ReportSummary(
            settings: [.init("script", "bots/<puck>.yaml"), .init("seed", "42")],
            totals: [.init("packets sent", "18000")],
            verdicts: [
                .init(name: "rtt_p99", expectation: "< 120ms", observed: "81ms", passed: true),
                .init(name: "desyncs", expectation: "== 0", observed: "1", passed: false),
            ])
        let html = HTMLReport.render(timeline: Self.timeline(), summary: summary, title: "puck-ladder & co")
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.components(separatedBy: "<svg").count - 1 == 6)
        #expect(html.components(separatedBy: "<polyline").count - 1 >= 6)
        #expect(!html.contains("<script"))
        // Values on hover: each chart's points carry a tooltip with every series' value at that time.
        // (four charts with data: this timeline has no snapshot age or tick lateness, whose charts say "no data").
        #expect(html.components(separatedBy: "<rect class=\"hover\"").count - 1 == 4 * 13)
        #expect(html.contains("<title>60 s: p50 80."), "the last RTT point's tooltip")
        #expect(html.contains("<title>60 s: bots 60</title>"))
        #expect(!html.contains("http:") && !html.contains("https:") && !html.contains("src="))
        #expect(html.contains("bots/&lt;puck&gt;.yaml"))
        #expect(html.contains("<title>puck-ladder &amp; co</title>"))
        #expect(html.contains("class=\"verdict fail\">FAIL"))
    }

    /// Figures nobody measured get no chart (a flat zero would read as a measurement) and are named once; the
    /// desyncs line leaves the errors chart. A summary written before `notMeasured` existed keeps every chart.
    @Test func chartsOfFiguresNobodyMeasuredAreLeftOutAndNamed() throws {
        let summary = ReportSummary(notMeasured: ["rtt", "snapshot_age", "desyncs"])
        let html = HTMLReport.render(timeline: Self.timeline(), summary: summary, title: "enet run")
        #expect(html.components(separatedBy: "<svg").count - 1 == 4)
        #expect(!html.contains("Round-trip time") && !html.contains("Snapshot age p99"))
        #expect(html.contains("aria-label=\"Errors (cumulative)\"") && !html.contains(">desyncs</text>"))
        #expect(html.contains("Tick lateness p99"))
        #expect(
            html.contains(
                "<p class=\"absent\">Not measured in this run (its protocol and behaviours do not measure them), so "
                    + "not charted: round trips, snapshot age, desyncs.</p>"))

        var json = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(summary)) as? [String: Any])
        #expect(json["notMeasured"] as? [String] == ["rtt", "snapshot_age", "desyncs"])
        json["notMeasured"] = nil
        let older = try JSONDecoder().decode(ReportSummary.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(older.notMeasured.isEmpty)
        let every = HTMLReport.render(timeline: Self.timeline(), summary: older, title: "older")
        #expect(every.components(separatedBy: "<svg").count - 1 == 6 && !every.contains("Not measured"))
    }

    /// Chromium from Debian (`make test-deps` installs it).
    static func chromium() throws -> String {
        let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Collector.Failure(description: "headless Chromium is missing: run `make test-deps` (Debian chromium)")
        }
        return path
    }

    @Test func reportRendersInHeadlessChromiumWithEveryChart() async throws {
        let summary = ReportSummary(
            settings: [.init("script", "bots/quickstart.yaml")], totals: [.init("desyncs", "1")],
            verdicts: [.init(name: "desyncs", expectation: "desyncs == 0", observed: "1", passed: false)])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-report-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = folder.appendingPathComponent("report.html")
        try HTMLReport.render(timeline: Self.timeline(), summary: summary, title: "chromium check")
            .write(to: page, atomically: true, encoding: .utf8)
        let browser = try Self.chromium()
        let common = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=\(folder.path)/profile", "--window-size=1280,1700",
        ]

        // The DOM Chromium built: every chart is there with its lines, and the verdict.
        let dom = try await Command.run(browser, common + ["--dump-dom", page.absoluteString], timeout: 90)
        #expect(dom.status == 0, "\(dom.output.suffix(2_000))")
        #expect(dom.output.components(separatedBy: "<svg class=\"chart\"").count - 1 == 6)
        #expect(dom.output.components(separatedBy: "<polyline").count - 1 >= 6)
        #expect(dom.output.contains("class=\"verdict fail\">FAIL"))
        #expect(!dom.output.contains("Uncaught"))

        // A screenshot a person can look at (kept when SKIRMISH_KEEP_SCREENSHOTS names a folder).
        let shot = folder.appendingPathComponent("report.png")
        let capture = try await Command.run(
            browser, common + ["--screenshot=\(shot.path)", page.absoluteString], timeout: 90)
        #expect(capture.status == 0, "\(capture.output.suffix(2_000))")
        let png = try Data(contentsOf: shot)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        // A blank 1280 × 1700 page compresses to a few KiB; six charts, tables and text take far more.
        #expect(png.count > 40_000, "screenshot is only \(png.count) bytes: the page looks empty")
        if let keep = ProcessInfo.processInfo.environment["SKIRMISH_KEEP_SCREENSHOTS"] {
            try? png.write(to: URL(fileURLWithPath: keep).appendingPathComponent("report.png"))
        }
    }

    /// The boxes of a page laid out by headless Chromium at `width` px that overlap, and the sections whose content
    /// does not fit their box: read by a script appended to a copy of the page (the report itself has none).
    static func overlaps(of page: URL, width: Int, in folder: URL) async throws -> [String] {
        let probe = """
            <script>
            (() => {
              const named = e => e.getAttribute('aria-label') || (e.querySelector('h2') || e).textContent.trim().slice(0, 40);
              const boxes = [...document.querySelectorAll('section, svg.chart, .top, h1')];
              const problems = [];
              for (let i = 0; i < boxes.length; i++) {
                for (let j = i + 1; j < boxes.length; j++) {
                  const a = boxes[i], b = boxes[j];
                  if (a.contains(b) || b.contains(a)) continue;
                  const r = a.getBoundingClientRect(), q = b.getBoundingClientRect();
                  const x = Math.min(r.right, q.right) - Math.max(r.left, q.left);
                  const y = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
                  if (x > 1 && y > 1) problems.push('overlap: ' + named(a) + ' / ' + named(b));
                }
              }
              for (const e of document.querySelectorAll('section')) {
                if (e.scrollWidth > e.clientWidth + 1) problems.push('too wide: ' + named(e));
              }
              if (document.documentElement.scrollWidth > window.innerWidth + 1) problems.push('page scrolls sideways');
              const out = document.createElement('pre');
              out.id = 'layout-problems';
              out.textContent = problems.length ? problems.join(' | ') : 'none';
              document.body.appendChild(out);
            })();
            </script>
            """
        let html = try String(contentsOf: page, encoding: .utf8)
        let probed = folder.appendingPathComponent("probe-\(width).html")
        try html.replacingOccurrences(of: "</body>", with: probe + "</body>").write(
            to: probed, atomically: true, encoding: .utf8)
        let dom = try await Command.run(
            try chromium(),
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=\(folder.path)/profile-\(width)", "--window-size=\(width),1200", "--dump-dom",
                probed.absoluteString,
            ], timeout: 90)
        guard dom.status == 0, let start = dom.output.range(of: "<pre id=\"layout-problems\">"),
            let end = dom.output[start.upperBound...].range(of: "</pre>")
        else { throw Collector.Failure(description: "no layout read: \(dom.output.suffix(1_000))") }
        let text = String(dom.output[start.upperBound..<end.lowerBound])
        return text == "none" ? [] : text.components(separatedBy: " | ")
    }

    /// An aborted run's long threshold lines, a seven-column latency table beside a server table, a wide comparison:
    /// nothing overlaps and nothing runs out of its box at 1280 and 1920 px.
    @Test(arguments: [1280, 1920])
    func noBoxOverlapsAnotherAtCommonWidths(width: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-layout-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let long = "worst of 1,284 windows 812.44 ms; first failing window 1,202–1,262 s (812.44 ms)"
        let summary = ReportSummary(
            settings: [
                .init("script", "bots/a-rather-long-script-name-for-the-nightly-soak-of-the-eu-cluster.yaml"),
                .init("target", "udp://game-server-eu-west-1.internal.example.com:4000"), .init("seed", "42"),
            ],
            totals: [.init("packets sent", "18,000,000"), .init("desyncs", "1")],
            verdicts: [
                .init(
                    name: "rtt_p99", expectation: "rtt_p99{game:puck,persona:chaser} < 120ms over every 1m window",
                    observed: long, passed: false),
                .init(name: "desyncs", expectation: "desyncs == 0", observed: "measured 1", passed: false),
                .init(
                    name: "aborted", expectation: "stopped early at 1,262 s: rtt_p99 < 120ms failed", observed: long,
                    passed: false),
            ],
            tables: [
                .init(
                    "Latency", columns: ["figure", "count", "p50", "p95", "p99", "max", "mean"],
                    rows: [
                        ["round trip", "12,345,678", "12.34 ms", "45.67 ms", "812.44 ms", "2,345.67 ms", "15.2 ms"],
                        ["snapshot age", "98,765,432", "22.1 ms", "61.9 ms", "101.4 ms", "1,999.99 ms", "24.0 ms"],
                    ]),
                .init(
                    "Server (embedded)", columns: ["figure", "value"],
                    rows: [["tick time p99", "0.512 ms"], ["sessions open at the end", "12,345"]]),
                .init(
                    "Compared with baseline nightly-20261127-abcdef — 99% intervals from a 1000-draw block bootstrap",
                    columns: ["persona", "game", "figure", "better", "base", "new", "change", "interval", "verdict"],
                    rows: [
                        [
                            "chaser", "puck", "matches_completed_per_bot_hour", "higher", "123.45", "118.02", "-4.4%",
                            "[−12.31, +2.17]", "no change",
                        ]
                    ], wide: true),
            ])
        let page = folder.appendingPathComponent("report.html")
        try HTMLReport.render(timeline: Self.timeline(), summary: summary, title: "layout check")
            .write(to: page, atomically: true, encoding: .utf8)
        let problems = try await Self.overlaps(of: page, width: width, in: folder)
        #expect(problems.isEmpty, "at \(width) px: \(problems)")
    }

    @Test func emptyTimelineSaysNoData() {
        let html = HTMLReport.render(timeline: RunTimeline(), summary: ReportSummary(), title: "empty")
        #expect(html.contains("no data"))
        #expect(html.contains("PASS (no thresholds)"))
    }

    @Test(arguments: [
        (0.0, 1.0, 0.25), (0.7, 0.8, 0.2), (1.0, 1.0, 0.2), (14.3, 15.0, 5.0), (50.0, 50.0, 10.0),
        (1_960.0, 2_000.0, 500.0), (3_600.0, 4_000.0, 1_000.0), (0.004_17, 0.005, 0.001),
    ])
    func chartAxesUseRoundSteps(maximum: Double, top: Double, step: Double) throws {
        let axis = HTMLReport.axis(maximum)
        #expect(abs(axis.top - top) < 1e-12)
        #expect(axis.top >= maximum)
        #expect(axis.ticks.first == 0)
        #expect(axis.ticks.count <= 6)
        let gaps = zip(axis.ticks.dropFirst(), axis.ticks).map { $0 - $1 }
        #expect(gaps.allSatisfy { abs($0 - step) < 1e-12 })
    }

    /// An empty table says why in a sentence instead of showing a bare header.
    @Test func emptyTablesSayWhy() {
        let html = HTMLReport.table(.init("Errors by kind", columns: ["kind", "count"], rows: [], empty: "no errors"))
        #expect(html.contains("<p class=\"empty\">no errors</p>") && !html.contains("<table"))
    }

    /// The report of a real run (the `skirmish` executable, its embedded server) as a k6 or Gatling user reads it,
    /// in headless Chromium at 1400 px: every table they look for, snapshot age and tick lateness charted beside
    /// RTT, and a page whose right-hand third is not left blank for most of its height.
    @Test func aRealRunsReportFillsThePageAt1400Pixels() async throws {
        let run = try await RealRun.run([])
        defer { run.remove() }
        try #require(run.status == 0, "\(run.stderr)")
        let page = run.out.appendingPathComponent("report.html")
        let browser = try Self.chromium()
        let common = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--user-data-dir=\(run.directory.path)/profile", "--window-size=1400,1700",
        ]
        let dom = try await Command.run(browser, common + ["--dump-dom", page.absoluteString], timeout: 90)
        #expect(dom.status == 0, "\(dom.output.suffix(2_000))")
        for heading in [
            "Settings", "Totals", "Personas", "Games", "Latency", "Errors by kind", "Server rejections by reason",
            "Exporter", "Server (embedded)", "Traffic",
        ] {
            #expect(dom.output.contains("<h2>\(heading)</h2>"), "no \(heading) section")
        }
        for persona in ["chaser", "cards", "suns"] { #expect(dom.output.contains("<td>\(persona)</td>")) }
        for row in ["round trip", "snapshot age", "tick lateness", "handshake", "reconnect"] {
            #expect(dom.output.contains("<td>\(row)</td>"), "no \(row) row in the latency table")
        }
        for chart in ["Round-trip time", "Snapshot age p99", "Tick lateness p99 (bot inputs)"] {
            let start = try #require(dom.output.range(of: "aria-label=\"\(chart)\""), "no \(chart) chart")
            let rest = dom.output[start.upperBound...]
            let body = rest[..<(rest.range(of: "</svg>")?.lowerBound ?? rest.endIndex)]
            #expect(body.contains("<polyline"), "\(chart) has no line")
        }

        for width in [1280, 1920] {
            let problems = try await Self.overlaps(of: page, width: width, in: run.directory)
            #expect(problems.isEmpty, "a real run's report at \(width) px: \(problems)")
        }

        let shot = run.directory.appendingPathComponent("report.png")
        let capture = try await Command.run(
            browser, common + ["--screenshot=\(shot.path)", page.absoluteString], timeout: 90)
        #expect(capture.status == 0, "\(capture.output.suffix(2_000))")
        let filled = try await Self.rightThirdFilled(shot)
        #expect(filled >= 0.6, "the right third of the page is blank on \(Int((1 - filled) * 100)) % of its rows")
        if let keep = ProcessInfo.processInfo.environment["SKIRMISH_KEEP_SCREENSHOTS"] {
            try? FileManager.default.copyItem(
                at: shot, to: URL(fileURLWithPath: keep).appendingPathComponent("report-real-run.png"))
        }
    }

    /// The share of the page's rows (down to the last non-white one) with anything but white in the right third,
    /// read from the PNG by a few lines of Python (zlib and the PNG row filters, no imaging library).
    static func rightThirdFilled(_ png: URL) async throws -> Double {
        let script = """
            import struct, sys, zlib
            data = open(sys.argv[1], 'rb').read()
            pos, chunks, header = 8, b'', None
            while pos < len(data):
                length, kind = struct.unpack('>I4s', data[pos:pos + 8])
                body = data[pos + 8:pos + 8 + length]
                if kind == b'IHDR': header = struct.unpack('>IIBBBBB', body)
                if kind == b'IDAT': chunks += body
                pos += 12 + length
            width, height, depth, color = header[:4]
            channels = {2: 3, 6: 4}[color]
            raw, stride, rows, previous, offset = zlib.decompress(chunks), width * channels, [], bytearray(width * channels), 0
            for _ in range(height):
                kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride]); offset += 1 + stride
                for i in range(stride):
                    a = line[i - channels] if i >= channels else 0
                    b = previous[i]
                    c = previous[i - channels] if i >= channels else 0
                    if kind == 1: line[i] = (line[i] + a) & 255
                    elif kind == 2: line[i] = (line[i] + b) & 255
                    elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
                    elif kind == 4:
                        p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                        line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
                rows.append(line); previous = line
            def inked(line, start):
                return any(line[x * channels + k] < 235 for x in range(start, width) for k in range(3))
            last = max((y for y in range(height) if inked(rows[y], 0)), default=0)
            print(sum(1 for y in range(last + 1) if inked(rows[y], width * 2 // 3)) / max(last + 1, 1))
            """
        let result = try await Command.run("/usr/bin/env", ["python3", "-c", script, png.path], timeout: 300)
        guard result.status == 0, let share = Double(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw Collector.Failure(description: "cannot read \(png.path): \(result.output)") }
        return share
    }
}
