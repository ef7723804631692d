import Foundation
import SkirmishTestSupport
import Testing

@testable import SkirmishTelemetry

#if canImport(Glibc)
    import Glibc
#endif

/// One run spread over N real `skirmish swarm` processes adds up in real collectors exactly as one process would.
@Suite(.serialized) struct ShardingTests {
    /// N = 1 and N = 3 processes of one run (`--run-id`, `--shard i/N`) push to VictoriaMetrics and to Pushgateway
    /// scraped by Prometheus. In both collectors the summed counters equal the sum of the processes' summary.json
    /// totals, there is one run with N shards, and `histogram_quantile(q, sum by (le) (…))` lands in the bucket
    /// of the same quantile of the shards' HDR histograms merged from their summary.json.
    @Test(arguments: [1, 3])
    func shardsOfOneRunAddUpInEveryCollector(shards: Int) async throws {
        let vm = try await Collector(.victoriaMetrics)
        let pushgateway = try await Collector(.pushgateway)
        let prometheus = try await Collector(.prometheus, scrapeTarget: pushgateway.port)
        let runID = "shards\(shards)-" + UUID().uuidString.prefix(8).lowercased()
        let processes = try (0..<shards).map { index in
            try ShardProcess(
                index: index, count: shards,
                arguments: [
                    "--run-id", runID, "--push", pushgateway.base, "--format", "prom",
                    "--push", vm.base + "/api/v1/import/prometheus", "--push-interval", "1",
                ])
        }
        defer { for process in processes { process.remove() } }
        for process in processes {
            let status = await process.wait(limit: 240)
            try #require(status == 0, "shard \(process.index): exit \(status): \(process.stderr)")
        }
        let summaries = try processes.map { try $0.summary() }
        #expect(summaries.allSatisfy { $0["run"] as? String == runID })
        func total(_ path: String...) -> Double {
            summaries.reduce(0) { sum, summary in
                var node: Any? = summary
                for key in path { node = (node as? [String: Any])?[key] }
                return sum + ((node as? NSNumber)?.doubleValue ?? 0)
            }
        }
        let expected: [(String, Double)] = [
            ("skirmish_packets_sent_total", total("packets", "sent")),
            ("skirmish_packets_received_total", total("packets", "received")),
            ("skirmish_bytes_sent_total", total("packets", "bytesSent")),
            ("skirmish_matches_started_total", total("matchesStarted")),
            ("skirmish_handshakes_total{outcome=\"ok\"}", total("handshakes", "succeeded")),
        ]
        #expect(expected[0].1 > 0)
        var merged: HistogramValue?
        for summary in summaries {
            let entry = try #require((summary["histograms"] as? [String: Any])?["skirmish_rtt_seconds"])
            let value = try JSONDecoder().decode(
                HistogramValue.self, from: JSONSerialization.data(withJSONObject: entry))
            if merged == nil { merged = value } else { merged?.merge(value) }
        }
        let rtt = try #require(merged)
        #expect(rtt.count > 0)

        for (name, collector) in [("VictoriaMetrics", vm), ("Prometheus", prometheus)] {
            for (selector, value) in expected {
                let inRun =
                    selector.contains("{")
                    ? selector.replacingOccurrences(of: "}", with: ",run=\"\(runID)\"}")
                    : selector + "{run=\"\(runID)\"}"
                let query = "sum(\(inRun))"
                let read = await Collector.poll(timeout: 30) { () -> Double? in
                    if collector === vm { _ = vm.get("/internal/force_flush") }
                    return collector.queryValues(query)?.first.flatMap { $0 == value ? $0 : nil }
                }
                #expect(read == value, "\(name): \(query) → \(collector.queryValues(query) ?? []) vs \(value)")
            }
            let shardCount = collector.queryValues(
                "count(count by (shard) (skirmish_packets_sent_total{run=\"\(runID)\"}))")?.first
            #expect(shardCount == Double(shards), "\(name)")
            let runs = collector.queryValues("sum by (run) (skirmish_packets_sent_total{run=\"\(runID)\"})")
            #expect(runs?.count == 1, "\(name): one run, not one line per shard")
            for q in [0.5, 0.99] {
                let query = "histogram_quantile(\(q), sum by (le) (skirmish_rtt_seconds_bucket{run=\"\(runID)\"}))"
                let fromCollector = try #require(collector.queryValues(query)?.first, "\(name): \(query)")
                let fromHDR = try #require(rtt.quantile(q))
                #expect(
                    Self.sameBucket(fromCollector, fromHDR, bounds: rtt.scale.bounds),
                    "\(name) p\(Int(q * 100)): \(fromCollector) vs merged HDR \(fromHDR)")
            }
        }
    }

    /// Whether a quantile Prometheus interpolated inside a bucket lies in the bucket of the HDR value (within the
    /// HDR's 0.1 % precision, which can put a value on a bound one way or the other).
    static func sameBucket(_ interpolated: Double, _ exact: Double, bounds: [Double]) -> Bool {
        [exact * (1 - 1e-3), exact, exact * (1 + 1e-3)].contains { value in
            let upper = bounds.first { $0 >= value } ?? .infinity
            let lower = bounds.last { $0 < value } ?? 0
            // histogram_quantile lands on a bucket's upper bound when the rank tops it, give or take an ulp of its
            // interpolation (0.005000000000000001 for 0.005): a bound is compared with a relative 1e-9 slack.
            return interpolated > lower * (1 + 1e-9) && interpolated <= upper * (1 + 1e-9)
        }
    }
}

/// One shard of a run: `skirmish swarm` with `--shard index/count`, started at once, awaited later.
final class ShardProcess {
    let index: Int
    let directory: URL
    private let process = ChildProcess()
    private let finished = DispatchSemaphore(value: 0)

    init(index: Int, count: Int, arguments: [String]) throws {
        self.index = index
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-shard-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("script.yaml")
        try RealRun.script.write(to: script, atomically: true, encoding: .utf8)
        process.executableURL = try RealRun.executable()
        process.arguments =
            [
                "swarm", script.path, "--shard", "\(index)/\(count)", "--out",
                directory.appendingPathComponent("out").path, "--plain-progress", "--loops", "1",
            ] + arguments
        let stderrFile = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        process.terminationHandler = { [finished] _ in finished.signal() }
        try process.run()
    }

    var stderr: String {
        (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? ""
    }

    /// Waits for the exit, at most `limit` seconds (then kills it); returns the status.
    func wait(limit: TimeInterval) async -> Int32 {
        let process = self.process
        let finished = self.finished
        return
            (try? await offPool {
                if finished.wait(timeout: .now() + limit) == .timedOut { process.send(SIGKILL) }
                process.waitUntilExit()
                return process.terminationStatus
            }) ?? -1
    }

    func summary() throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent("out/summary.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func remove() {
        if process.isRunning {
            process.send(SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
