import Foundation
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// Figures a protocol cannot measure are absent, never 0: a run whose series were planned for a protocol without
/// round trips, snapshots or state checks shows those figures as `null` in `summary.json`, `—` in the table, no
/// chart in the report, a failing "not measured" verdict for thresholds on them, and "not measured" in a comparison;
/// a SNAP run planned the same way still shows everything it measured, zeros included.
@Suite struct AbsentFigureTests {
    static let script = """
        name: absent
        profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 9s}}]
        personas:
          - {name: chaser, game: puck, behavior: chaser}
          - {name: player, game: snap, behavior: snap-player}
        """

    /// A protocol that measures handshakes and resends only: no pings, no snapshots, no state checks, and a
    /// behaviour that reports nothing of its own.
    static func plainPlan(_ persona: Persona) -> Meters.Plan {
        Meters.Plan(
            description: ProtocolDescription(
                name: "plain", transports: [.udp], packetKinds: [PacketKind("data", delivery: "reliable")],
                figures: [.handshake, .resends]))
    }

    /// SNAP's plan for the persona, from the built-in catalogue, as a bot loop makes it.
    static func snapPlan(_ persona: Persona) -> Meters.Plan {
        let catalogue = Catalogue.builtIn
        return Meters.Plan(
            description: catalogue.description(of: "snap")!,
            behavior: catalogue.kind(of: persona, in: "snap")?.series(for: persona) ?? BehaviorSeries())
    }

    /// Ten seconds of two bots per persona, each recording only what its plan measures (as the protocol and
    /// behaviour would), sampled each second; `desyncAt` adds one desync episode in that second where measured.
    static func run(
        _ plan: (Persona) -> Meters.Plan, protocolName: String, thresholds: String = "", desyncAt: Int? = nil
    ) throws -> RunSummary {
        var script = try Catalogue.builtIn.scriptLoader.parse(
            Self.script + (thresholds.isEmpty ? "" : "\nthresholds:\n" + thresholds), file: "absent.yaml")
        script.protocolName = protocolName
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        let meters = script.personas.map { Meters(shard: shard, spec: $0, plan: plan($0)) }
        var samples = RunSamples()
        for second in 1...10 {
            for meter in meters {
                shard.set(meter.botsConnected, 2)
                if second == 1 {
                    shard.add(meter.handshakes, 2)
                    for _ in 0..<2 { meter.record(meter.handshake, seconds: 0.002) }
                }
                for _ in 0..<30 {
                    meter.sent(kind: 0, bytes: 40)
                    meter.received(kind: 0, bytes: 60)
                }
                if meter.figures.contains(.roundTrip) {
                    shard.add(meter.pingsSent, 2)
                    shard.add(meter.pongsReceived, 2)
                    for step in 0..<20 { meter.record(meter.rtt, seconds: 0.010 + Double(step) * 0.0002) }
                }
                if meter.figures.contains(.snapshotAge) {
                    for _ in 0..<20 { meter.record(meter.snapshotAge, seconds: 0.004) }
                }
                if meter.figures.contains(.tickLateness) {
                    shard.add(meter.inputsSent, 20)
                    for _ in 0..<20 { meter.record(meter.tickLateness, seconds: 0.000_5) }
                }
                if meter.figures.contains(.desyncs), second == desyncAt {
                    shard.add(
                        shard.counter(
                            SkirmishMetrics.desyncs,
                            ["game": meter.spec.gameName, "persona": meter.persona, "part": "hash"]))
                }
            }
            samples.record(shard.snapshot(at: 0), at: Double(second), personas: script.personas.map(\.name))
        }
        samples.finish()
        let plan = try LoadPlan(script: script, overrides: .init(duration: .seconds(10)))
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: 9), seed: 1,
            runID: "\(protocolName)-run")
        let outcome = SwarmOutcome(
            snapshot: shard.snapshot(at: 0), timeline: RunTimeline(), elapsed: .seconds(10), interrupted: false,
            peakBots: 4, samples: samples)
        return RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "absent.yaml",
            startedAt: Date(timeIntervalSince1970: 0), exporter: nil)
    }

    /// `summary.json` as written, read back as plain JSON.
    static func json(_ summary: RunSummary) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try #require(try JSONSerialization.jsonObject(with: encoder.encode(summary)) as? [String: Any])
    }

    @Test func aProtocolWithoutRoundTripsOrSnapshotsLeavesThemOutOfTheSummary() throws {
        let summary = try Self.run(Self.plainPlan, protocolName: "plain")
        #expect(summary.protocol == "plain")
        // Absent, not 0: no series, so no figure.
        #expect(summary.latency.rtt == nil)
        #expect(summary.latency.snapshotAge == nil)
        #expect(summary.latency.tickLateness == nil)
        #expect(summary.latency.snapshotInterval == nil)
        #expect(summary.predictionErrorPixels == nil)
        #expect(summary.desyncs == nil && summary.mispredictions == nil)
        #expect(summary.matchesStarted == nil && summary.matchesCompleted == nil)
        #expect(summary.packets.lost == nil)
        #expect(summary.replyRate == nil && summary.onTimeSendRate == nil)
        #expect(summary.histograms?["skirmish_rtt_seconds"] == nil)
        // What it measures is there, zeros included.
        #expect(summary.packets.resends == 0)
        #expect(summary.latency.handshake?.count == 4)
        #expect(summary.packets.sent == 600)
        for persona in summary.personas {
            #expect(persona.figures == ["resends", "handshake"], "\(persona.name)")
            #expect(persona.rtt == nil && persona.desyncs == nil && persona.matchesCompleted == nil)
            #expect(persona.snapshotAgeP99 == nil && persona.tickLatenessP99 == nil)
        }
        for game in summary.games.values {
            #expect(game.desyncs == nil && game.matchesStarted == nil && game.matchesCompleted == nil)
        }
        #expect(
            summary.notMeasured.map(\.rawValue) == [
                "rtt", "loss", "snapshot_age", "snapshot_interval", "tick_lateness", "prediction", "desyncs", "matches",
            ])

        // summary.json says null, never 0, and reads back as absent.
        let json = try Self.json(summary)
        #expect(json["protocol"] as? String == "plain")
        let latency = try #require(json["latency"] as? [String: Any])
        #expect(latency["rtt"] is NSNull && latency["snapshotAge"] is NSNull)
        #expect(latency["handshake"] is [String: Any])
        #expect(json["desyncs"] is NSNull && json["matchesStarted"] is NSNull && json["mispredictions"] is NSNull)
        let packets = try #require(json["packets"] as? [String: Any])
        #expect(packets["lost"] is NSNull && packets["resends"] as? Int == 0)
        let persona = try #require((json["personas"] as? [[String: Any]])?.first)
        #expect(persona["rtt"] is NSNull && persona["desyncs"] is NSNull && persona["snapshotAgeP99"] is NSNull)
        #expect(persona["figures"] as? [String] == ["resends", "handshake"])
        let decoded = try JSONDecoder().decode(RunSummary.self, from: JSONEncoder().encode(summary))
        #expect(decoded.latency == summary.latency && decoded.personas == summary.personas)
        #expect(decoded.desyncs == nil && decoded.packets.resends == 0)
    }

    @Test func theTableShowsDashesAndNamesWhatWasNotMeasured() throws {
        let table = try Self.run(Self.plainPlan, protocolName: "plain").table()
        let lines = table.split(separator: "\n").map(String.init)
        let chaser = try #require(lines.first { $0.hasPrefix("chaser ") })
        // matches, rtt p50/p95/p99, age p99, late p99 and desyncs are dashes; errors is a real 0.
        #expect(chaser.split(separator: " ").filter { $0 == "—" }.count == 7, "\(chaser)")
        #expect(!chaser.contains("ms"), "\(chaser)")
        #expect(chaser.hasSuffix(" 0"), "\(chaser)")
        #expect(
            lines.contains(
                "not measured (protocol plain): round trips, packet loss, snapshot age, snapshot interval, tick "
                    + "lateness, prediction error, desyncs, matches"), "\(table)")
        // Nothing unmeasured is printed as a count or a time.
        #expect(!table.contains("0 desyncs"), "\(table)")
        #expect(!table.contains("rtt p99") && !table.contains("lost") && !table.contains("mispredictions"))
        #expect(lines.contains { $0.hasPrefix("packets: 600 sent, 600 received, 0 resent; ") }, "\(table)")
        #expect(lines.contains { $0.hasPrefix("latency: handshake p99 ") }, "\(table)")
        #expect(!lines.contains { $0.hasPrefix("puck:") || $0.hasPrefix("snap:") }, "no game figure was measured")
    }

    @Test func thresholdsOnFiguresNobodyMeasuredFailAsNotMeasured() throws {
        let thresholds = """
              desyncs: "== 0"
              packet_loss_rate: "< 1%"
              rtt_p99: {limit: "< 100ms", window: 2s}
              errors: "== 0"
              resends: "== 0"
            """
        let summary = try Self.run(Self.plainPlan, protocolName: "plain", thresholds: thresholds)
        let verdicts = Dictionary(uniqueKeysWithValues: summary.thresholds.map { ($0.name, $0) })
        for name in ["desyncs", "packet_loss_rate", "rtt_p99"] {
            let verdict = try #require(verdicts[name])
            #expect(verdict.measured == false && !verdict.passed && verdict.value == nil, "\(name)")
        }
        for name in ["errors", "resends"] {
            let verdict = try #require(verdicts[name])
            #expect(verdict.measured == true && verdict.passed && verdict.value == 0, "\(name)")
        }
        #expect(!summary.passed)
        let table = summary.table()
        #expect(
            table.contains(
                "FAIL  desyncs == 0  (not measured: no persona's protocol or behaviour measures desyncs; remove the "
                    + "threshold or run a protocol that measures it)"), "\(table)")
        #expect(
            table.contains(
                "FAIL  rtt_p99 < 100ms over every 2s window  (not measured: no persona's protocol or behaviour "
                    + "measures round trips; "), "\(table)")
        #expect(table.contains("PASS  errors == 0  (measured 0)"), "\(table)")
        #expect(table.hasSuffix("a threshold failed: exit status 99"))
        let json = try Self.json(summary)
        let desyncs = try #require((json["thresholds"] as? [[String: Any]])?.first)
        #expect(desyncs["measured"] as? Bool == false && desyncs["passed"] as? Bool == false)
        #expect(desyncs["figure"] as? String == "desyncs")

        // The same thresholds on SNAP, which measures all of them, are judged as before.
        let snap = try Self.run(Self.snapPlan, protocolName: "snap", thresholds: thresholds)
        #expect(snap.thresholds.allSatisfy { $0.measured == true && $0.passed }, "\(snap.thresholds)")
        #expect(snap.passed)
    }

    @Test func theReportLeavesOutChartsAndCardsOfFiguresNobodyMeasured() throws {
        let summary = try Self.run(Self.plainPlan, protocolName: "plain")
        let report = RunOutput.reportSummary(of: summary)
        #expect(report.notMeasured.contains("rtt") && report.notMeasured.contains("desyncs"))
        #expect(!report.headline.contains { $0.name == "rtt p99" || $0.name == "desyncs" })
        #expect(report.totals.first { $0.name == "desyncs" }?.value == "not measured")
        #expect(report.totals.first { $0.name == "rtt p50 / p95 / p99" }?.value == "not measured")
        #expect(report.settings.first { $0.name == "protocol" }?.value == "plain")
        let latency = try #require(report.tables.first { $0.title == "Latency" })
        #expect(latency.rows.first { $0[0] == "round trip" } == ["round trip", "not measured", "—", "—", "—", "—"])
        #expect(latency.rows.first { $0[0] == "handshake" }?[1] == "4")
        let personas = try #require(report.tables.first { $0.title == "Personas" })
        #expect(personas.rows.allSatisfy { !$0.contains { $0.hasSuffix(" ms") } }, "\(personas.rows)")
        let html = HTMLReport.render(timeline: RunTimeline(), summary: report, title: "t")
        #expect(!html.contains("Round-trip time") && !html.contains("Snapshot age p99"))
        #expect(html.contains("Errors (cumulative)") && !html.contains("Desyncs and errors"))
        #expect(html.contains("Not measured in this run"))

        // A SNAP run's report keeps its charts.
        let snap = RunOutput.reportSummary(of: try Self.run(Self.snapPlan, protocolName: "snap"))
        #expect(snap.notMeasured == ["snapshot_interval"])
        let snapHTML = HTMLReport.render(timeline: RunTimeline(), summary: snap, title: "t")
        #expect(snapHTML.contains("Round-trip time") && snapHTML.contains("Desyncs and errors (cumulative)"))
        #expect(snap.headline.contains { $0.name == "rtt p99" } && snap.headline.contains { $0.name == "desyncs" })
    }

    @Test func aSnapRunStillShowsEverythingItMeasured() throws {
        let summary = try Self.run(Self.snapPlan, protocolName: "snap")
        #expect(summary.protocol == "snap")
        #expect(summary.latency.rtt?.count == 2 * 10 * 20)
        // Measured and 0 is 0: the chaser's replica is checked, nothing diverged.
        #expect(summary.desyncs == 0 && summary.matchesStarted == 0 && summary.mispredictions == 0)
        #expect(summary.packets.lost == 0 && summary.packets.resends == 0)
        #expect(summary.latency.snapshotAge?.count == 10 * 20)
        #expect(summary.replyRate == 1)
        let chaser = try #require(summary.personas.first { $0.name == "chaser" })
        #expect(
            chaser.figures == [
                "rtt", "resends", "loss", "handshake", "snapshot_age", "tick_lateness", "prediction", "desyncs",
                "matches", "checks",
            ])
        #expect(chaser.desyncs == 0 && chaser.matchesCompleted == 0 && chaser.rtt?.p99 != nil)
        let player = try #require(summary.personas.first { $0.name == "player" })
        // A Snap player sends no scheduled inputs and reads no snapshot ages: those alone are absent.
        #expect(player.figures == ["rtt", "resends", "loss", "handshake", "desyncs", "matches", "checks"])
        #expect(player.rtt != nil && player.snapshotAgeP99 == nil && player.desyncs == 0)

        let table = summary.table()
        #expect(table.contains("puck: 0 matches started, 0 completed (each player counts its own), 0 desyncs"))
        #expect(table.contains(", 0 lost, 0 resent; "), "\(table)")
        #expect(table.contains("latency: rtt p99 "), "\(table)")
        #expect(table.contains("not measured (protocol snap): snapshot interval"), "\(table)")
        let json = try Self.json(summary)
        #expect(json["desyncs"] as? Int == 0)
        #expect((json["latency"] as? [String: Any])?["rtt"] is [String: Any])
    }

    @Test func compareListsAFigureOnlyOneRunMeasuredAsNotMeasuredAndNeverWorse() throws {
        // The baseline spoke SNAP and had a desync; the new run's protocol checks nothing: read as 0 that would be
        // "better", and the other way round a desync "where the baseline had none" would be worse.
        let snap = try Self.run(Self.snapPlan, protocolName: "snap", desyncAt: 4)
        let plain = try Self.run(Self.plainPlan, protocolName: "plain")
        for (base, new, absentIn) in [(snap, plain, "new"), (plain, snap, "base")] {
            let comparison = Comparison(base: base, new: new)
            let rows = comparison.rows.filter { $0.persona == "chaser" }
            let verdicts = Dictionary(uniqueKeysWithValues: rows.map { ($0.metric, $0) })
            for metric in [
                "rtt_p50", "rtt_p99", "snapshot_age_p99", "tick_lateness_p99", "desyncs_per_bot_hour",
                "misprediction_rate", "matches_completed_per_bot_hour", "checks_failed_per_bot_hour",
            ] {
                let row = try #require(verdicts[metric])
                #expect(row.verdict == .notMeasured, "\(metric): \(row)")
                #expect(row.notMeasuredIn == [absentIn] && row.base == nil && row.new == nil, "\(metric)")
            }
            // What both measured is still compared.
            #expect(verdicts["packets_per_second"]?.verdict == .noChange)
            #expect(verdicts["errors_per_bot_hour"]?.verdict == .noChange)
            #expect(!comparison.anyWorse)
            #expect(comparison.comparedAnything)
            let table = comparison.table()
            let side = absentIn == "new" ? "the new run plain-run" : "the baseline plain-run"
            #expect(
                table.contains(
                    "chaser: not measured in \(side): rtt_p50, rtt_p95, rtt_p99, snapshot_age_p99, tick_lateness_p99, "
                        + "desyncs_per_bot_hour, misprediction_rate, checks_failed_per_bot_hour, "
                        + "matches_completed_per_bot_hour"), "\(table)")
            // Throughput and errors of both personas.
            #expect(table.contains("0 worse, 0 better, 4 no change, "), "\(table)")
            // A figure neither run measured is no news: counted, listed only with --all.
            #expect(!table.contains("not measured in either run"), "\(table)")
            #expect(table.hasSuffix(", 18 not measured in one run or both (never compared as 0)"), "\(table)")
            let all = comparison.table(all: true)
            #expect(all.contains("not measured in either run\n"), "\(all)")
            #expect(all.contains("not measured in the \(absentIn == "new" ? "new run" : "baseline")\n"), "\(all)")
        }
    }

    @Test func aSummaryWrittenBeforeFiguresWereKeptComparesAsBefore() throws {
        // Strip what older versions never wrote: the protocol, the figures, the snapshot interval.
        var json = try Self.json(try Self.run(Self.snapPlan, protocolName: "snap"))
        json["protocol"] = nil
        json["personas"] = (json["personas"] as? [[String: Any]])?.map { persona in
            var persona = persona
            persona["figures"] = nil
            return persona
        }
        var latency = try #require(json["latency"] as? [String: Any])
        latency["snapshotInterval"] = nil
        json["latency"] = latency
        let old = try JSONDecoder().decode(RunSummary.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(old.protocol == nil && old.personas.allSatisfy { $0.figures == nil })
        #expect(old.latency.snapshotInterval == nil && old.latency.rtt != nil)
        // An old summary claims nothing about the interval, so nothing is called not measured.
        #expect(old.notMeasured.isEmpty)
        #expect(!old.table().contains("not measured"))
        let comparison = Comparison(base: old, new: try Self.run(Self.snapPlan, protocolName: "snap"))
        let chaser = comparison.rows.filter { $0.persona == "chaser" }
        #expect(!chaser.contains { $0.verdict == .notMeasured }, "\(chaser)")
        #expect(chaser.first { $0.metric == "rtt_p99" }?.verdict == .noChange)
    }
}
