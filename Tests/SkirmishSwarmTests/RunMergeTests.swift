import Foundation
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// `skirmish merge`'s core: shards written as runs write them, read back and added up into one summary whose
/// figures equal those of one process holding every bot, and every way a set of folders is not one run, refused.
@Suite struct RunMergeTests {
    static let script = """
        name: merge
        profile: [{ramp: {to: 10, over: 1s}}, {hold: {for: 9s}}]
        personas:
          - {name: chaser, game: puck, behavior: chaser, weight: 3, tags: {team: red}}
          - {name: player, game: snap, behavior: snap-player, weight: 2}
        thresholds:
          errors: "< 10"
          rtt_p99{persona:chaser}: "< 1s"
          rtt_p99: {limit: "< 1s", window: 2s}
        """

    /// Bot `bot`'s round trips: a spread of values that differs per bot, so the shards' distributions differ.
    static func roundTrips(of bot: Int) -> [Double] {
        (0..<40).map { step in 0.001 + Double((bot * 37 + step * 11) % 250) * 0.000_4 }
    }

    /// The run of `bots` (global bot numbers; even ones chase, odd ones play Snap) as shard `shard`, written to
    /// `folder` with its script, as a process of that shard writes its results. Each bot records its round trips
    /// and one error, so a count threshold judged per shard passes where the whole run's fails.
    @discardableResult
    static func write(
        bots: [Int], shard: Shard, runID: String = "merge-1", text: String = script, variables: [String: String] = [:],
        to folder: String
    ) throws -> RunSummary {
        var loader = Catalogue.builtIn.scriptLoader
        loader.environment = variables
        let script = try loader.parse(text, file: "merge.yaml")
        let metrics = MetricsShard(constantLabels: ["run": "r"])
        let meters = script.personas.map { persona in
            Meters(
                shard: metrics, spec: persona,
                plan: Meters.Plan(
                    description: Catalogue.builtIn.description(of: "snap")!,
                    behavior: Catalogue.builtIn.kind(of: persona, in: "snap")?.series(for: persona)
                        ?? BehaviorSeries()))
        }
        for bot in bots {
            let meter = meters[bot % 2]
            metrics.add(meter.pingsSent, 40)
            metrics.add(meter.pongsReceived, 40)
            for value in roundTrips(of: bot) { meter.record(meter.rtt, seconds: value) }
            meter.error("handshake_timeout")
            meter.sent(kind: 0, bytes: 40)
        }
        let plan = try LoadPlan(script: script, overrides: .init(duration: .seconds(10)), shard: shard)
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: 9), seed: 1,
            runID: runID)
        var outcome = SwarmOutcome(
            snapshot: metrics.snapshot(at: 0), timeline: RunTimeline(), elapsed: .seconds(10), interrupted: false,
            peakBots: bots.count)
        outcome.personaPeaks = [bots.filter { $0 % 2 == 0 }.count, bots.filter { $0 % 2 == 1 }.count]
        outcome.windows = [nil, nil, ThresholdJudge.WindowRecord(judged: 8, failed: 0, firstFailure: nil, worst: 0.05)]
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "merge.yaml",
            startedAt: Date(timeIntervalSince1970: 0), exporter: nil)
        try RunOutput.write(summary: summary, outcome: outcome, script: script.text, to: folder)
        return summary
    }

    /// Two shards of one run written into `root`, merged: the merge, its summary and series, and where it goes.
    static func twoShards(in root: String) throws -> (RunMerge, RunSummary, MetricsSnapshot, String) {
        try write(bots: [0, 1, 2], shard: Shard(index: 0, count: 2), to: root + "/0")
        try write(bots: [3, 4], shard: Shard(index: 1, count: 2), to: root + "/1")
        let merge = try RunMerge(folders: try RunMerge.folders(in: [root]), loader: Catalogue.builtIn.scriptLoader)
        let (summary, snapshot) = merge.merged()
        return (merge, summary, snapshot, root + "/" + RunMerge.mergedFolder)
    }

    static func folder(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("merge-\(UUID().uuidString)/\(name)").path
    }

    @Test("shards that split one run's bots merge into exactly the single run's figures")
    func shardsMergeIntoTheSingleRun() throws {
        let root = Self.folder("run")
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: root).deletingLastPathComponent().path)
        }
        let single = try Self.write(bots: Array(0..<10), shard: .whole, to: root + "-single")
        try Self.write(bots: [0, 3, 4, 9], shard: Shard(index: 0, count: 3), to: root + "/0")
        try Self.write(bots: [1, 2, 5], shard: Shard(index: 1, count: 3), to: root + "/1")
        let third = try Self.write(bots: [6, 7, 8], shard: Shard(index: 2, count: 3), to: root + "/2")

        let merge = try RunMerge(folders: try RunMerge.folders(in: [root]), loader: Catalogue.builtIn.scriptLoader)
        #expect(merge.shards.map(\.index) == [0, 1, 2])
        let (merged, _) = merge.merged()

        // Percentiles from the merged HDR counts, overall and per persona, equal the single process's.
        #expect(merged.latency.rtt == single.latency.rtt)
        #expect(merged.latency.rtt?.count == 400)
        for (a, b) in zip(merged.personas, single.personas) {
            #expect(a.name == b.name)
            #expect(a.rtt == b.rtt, "\(a.name)")
            #expect(a.peakBots == b.peakBots, "\(a.name)")
            #expect(a.errors == b.errors, "\(a.name)")
        }
        #expect(merged.errors == single.errors)
        #expect(merged.packets == single.packets)
        #expect(merged.peakBots == 10)
        #expect(merged.settings.shard == "all of 3")
        #expect(merged.shards?.map(\.shard) == ["0/3", "1/3", "2/3"])

        // Each shard alone passes `errors < 10` (3 or 4 errors); the whole run has 10 and fails it.
        #expect(third.thresholds[0].passed)
        #expect(merged.thresholds[0].value == 10)
        #expect(!merged.thresholds[0].passed)
        #expect(merged.thresholds[1].filter == ["persona": "chaser"])
        #expect(merged.thresholds[1].value == single.thresholds[1].value)
        // The windowed threshold keeps the shards' windows.
        #expect(merged.thresholds[2].windowsJudged == 8)
        #expect(merged.thresholds[2].passed)
        #expect(!merged.passed)
    }

    @Test("two writers of one results folder at once leave whole files, never one's half of another's")
    func concurrentWritersLeaveWholeFiles() async throws {
        let root = Self.folder("run")
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: root).deletingLastPathComponent().path)
        }
        let (merge, summary, snapshot, out) = try Self.twoShards(in: root)
        let text = merge.script.text
        // As two last shards finishing together do: each writes the whole merge, again and again.
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var failed = 0
                    for _ in 0..<20 {
                        do {
                            try RunOutput.write(summary: summary, snapshot: snapshot, script: text, to: out)
                        } catch {
                            failed += 1
                        }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        #expect(try RunSummary.load(path: out + "/summary.json").latency.rtt == summary.latency.rtt)
        let data = try #require(FileManager.default.contents(atPath: out + "/metrics.json"))
        #expect(try JSONDecoder().decode(MetricsSnapshot.self, from: data).series.count == snapshot.series.count)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.contains(".partial") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("merge writes the run's folder, which reads back and is never read again as a shard")
    func mergedFolderRoundTrips() throws {
        let root = Self.folder("run")
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: root).deletingLastPathComponent().path)
        }
        let (merge, summary, snapshot, out) = try Self.twoShards(in: root)
        try RunOutput.write(summary: summary, snapshot: snapshot, script: merge.script.text, to: out)
        let read = try RunSummary.load(path: out + "/summary.json")
        #expect(read.latency.rtt == summary.latency.rtt)
        #expect(read.shards?.count == 2)
        let data = try #require(FileManager.default.contents(atPath: out + "/metrics.json"))
        let decoded = try JSONDecoder().decode(MetricsSnapshot.self, from: data)
        #expect(decoded.histogram(SkirmishMetrics.rtt)?.count == 200)
        // Merging the folder again reads the two shards, not the merge beside them.
        #expect(try RunMerge.folders(in: [root]).map { URL(fileURLWithPath: $0).lastPathComponent } == ["0", "1"])
    }

    @Test("folders that are not one whole run are refused, each naming the folder and the fix")
    func refusals() throws {
        let root = Self.folder("run")
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: root).deletingLastPathComponent().path)
        }
        let loader = Catalogue.builtIn.scriptLoader
        try Self.write(bots: [0, 1], shard: Shard(index: 0, count: 3), to: root + "/0")
        try Self.write(bots: [2, 3], shard: Shard(index: 1, count: 3), to: root + "/1")
        try Self.write(bots: [4], shard: Shard(index: 1, count: 3), to: root + "/1-again")
        try Self.write(bots: [5], shard: Shard(index: 2, count: 3), runID: "other", to: root + "/other")
        try Self.write(
            bots: [5], shard: Shard(index: 2, count: 3), text: Self.script + "\n# edited\n", to: root + "/edited")
        try Self.write(
            bots: [5], shard: Shard(index: 2, count: 3),
            text: Self.script.replacingOccurrences(
                of: "weight: 2}", with: "weight: ${W}}"), variables: ["W": "2"], to: root + "/variables")

        func refusal(_ names: [String], allowMissing: Bool = false) -> String {
            do {
                _ = try RunMerge(folders: names.map { root + "/" + $0 }, loader: loader, allowMissing: allowMissing)
                return "merged"
            } catch {
                return error.description
            }
        }
        #expect(refusal(["0", "1", "other"]).contains("their run ids are merge-1 and other"))
        #expect(refusal(["0", "1", "edited"]).contains("their scripts differ"))
        #expect(refusal(["0", "1", "variables"]).contains("scripts differ"))
        #expect(refusal(["0", "1", "1-again"]).contains("are both shard 1/3 of run merge-1"))
        let missing = refusal(["0", "1"])
        #expect(missing.contains("shard 2 is not among the folders given"), "\(missing)")
        #expect(missing.contains("--allow-missing"))

        // Allowed, a missing shard is named and the run does not pass.
        let partial = try RunMerge(folders: [root + "/0", root + "/1"], loader: loader, allowMissing: true)
        #expect(partial.missing == [2])
        let (summary, _) = partial.merged()
        #expect(summary.missingShards == [2])
        #expect(summary.settings.shard == "2 of 3")
        #expect(!summary.passed)

        // A script.yaml that is not the one the shard ran is refused by its digest.
        try (Self.script + "\n# changed after the run\n").write(
            toFile: root + "/0/script.yaml", atomically: true, encoding: .utf8)
        #expect(refusal(["0", "1"], allowMissing: true).contains("is not the script"))
        // A shard whose histogram of a family has another scale (another version's) cannot add up with the others.
        var metrics = MetricsSnapshot()
        let rescaled = MetricFamily(
            name: SkirmishMetrics.rtt.name, help: "", kind: .histogram(.pixels),
            labelNames: SkirmishMetrics.rtt.labelNames)
        metrics.insert(
            MetricSeries(
                family: rescaled, labels: ["persona": "x"], value: .histogram(HistogramValue(scale: .pixels))))
        try JSONEncoder().encode(metrics).write(to: URL(fileURLWithPath: root + "/1/metrics.json"))
        #expect(refusal(["1", "0"], allowMissing: true).contains("record skirmish_rtt_seconds differently"))
        // A folder that holds no run, and a metrics.json that is not one.
        #expect(throws: RunMerge.Problem.self) { try RunMerge.folders(in: [root + "/nothing"]) }
        try "{}".write(toFile: root + "/1/metrics.json", atomically: true, encoding: .utf8)
        #expect(refusal(["1"], allowMissing: true).contains("metrics.json is not a Skirmish metrics file"))
    }

    @Test("the variables a script read are named and fingerprinted, never written, and the merge reads them alike")
    func variablesAreCheckedNotWritten() throws {
        let root = Self.folder("run")
        defer {
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: root).deletingLastPathComponent().path)
        }
        let text = Self.script.replacingOccurrences(of: "weight: 2}", with: "weight: ${W:-1}}")
        let first = try Self.write(
            bots: [0, 1], shard: Shard(index: 0, count: 2), text: text, variables: ["W": "2", "UNUSED": "x"],
            to: root + "/0")
        try Self.write(
            bots: [2, 3], shard: Shard(index: 1, count: 2), text: text, variables: ["W": "2"], to: root + "/1")
        // The same script text with another value for W: a shard of another run, in effect.
        try Self.write(
            bots: [2, 3], shard: Shard(index: 1, count: 2), text: text, variables: ["W": "3"], to: root + "-three/1")
        #expect(first.settings.variables == ["W"])
        #expect(first.settings.variablesDigest != nil)
        let written = try String(contentsOfFile: root + "/0/summary.json", encoding: .utf8)
        #expect(!written.contains("\"W\" : \"2\"") && !written.contains("W=2"), "no value is written")

        var loader = Catalogue.builtIn.scriptLoader
        loader.environment = ["W": "2"]
        let merge = try RunMerge(folders: try RunMerge.folders(in: [root]), loader: loader)
        #expect(merge.script.personas[1].weight == 2)

        func refusal(_ folders: [String], environment: [String: String]) -> String {
            var loader = Catalogue.builtIn.scriptLoader
            loader.environment = environment
            do {
                _ = try RunMerge(folders: folders, loader: loader)
                return "merged"
            } catch {
                return error.description
            }
        }
        // A merge that does not have W as the shards had it cannot read their script alike.
        #expect(
            refusal([root + "/0", root + "/1"], environment: ["W": "3"]).contains("the variables W with other values"))
        #expect(refusal([root + "/0", root + "/1"], environment: [:]).contains("--env NAME=VALUE"))
        // Shards that read W with different values are not one run.
        #expect(
            refusal([root + "/0", root + "-three/1"], environment: ["W": "2"])
                .contains("they read the script's variables with other values"))
    }
}
