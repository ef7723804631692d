import Foundation
import SkirmishSwarm
import Testing

/// `skirmish merge` and `--merge` as a person runs them: real shard processes, their folders, the merged folder.
@Suite(.serialized) struct MergeCommandTests {
    static let script = """
        name: merge-cli
        profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 1s}}]
        personas:
          - {name: chaser, game: puck, behavior: chaser, weight: 1}
          - {name: player, game: snap, behavior: snap-player, weight: 1}
        thresholds:
          handshake_failure_rate: "< 50%"
        """

    @Test("two shards with --merge: the last to finish writes the run's merge; merge and its refusals")
    func shardsMergeThemselvesAndMergeReadsThem() async throws {
        let directory = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("merge.yaml")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let root = directory.appendingPathComponent("merge-cli-1").path

        func shard(_ index: Int, run: String = "merge-cli-1", out: String) async throws -> CommandLineTests.Finished {
            try await CommandLineTests.run(
                [
                    "swarm", script.path, "--shard", "\(index)/2", "--run-id", run, "--out", out, "--merge",
                    "--plain-progress",
                ], limit: .seconds(120))
        }
        async let first = shard(0, out: root + "/0")
        async let second = shard(1, out: root + "/1")
        let shards = try await [first, second]
        for (index, finished) in shards.enumerated() {
            #expect(finished.status == 0, "shard \(index): \(finished.stderr)")
        }
        // Exactly the shards that saw every shard finished merged; at least the last one did.
        let notes = shards.map(\.stderr).joined()
        #expect(notes.contains("every shard has finished; run merge-cli-1 merged into \(root)/merged"), "\(notes)")
        let merged = try RunSummary.load(path: root + "/merged/summary.json")
        let parts = try [0, 1].map { try RunSummary.load(path: root + "/\($0)/summary.json") }
        #expect(merged.run == "merge-cli-1")
        #expect(merged.settings.shard == "all of 2")
        #expect(merged.peakBots == parts.reduce(0) { $0 + $1.peakBots })
        #expect(merged.handshakes.succeeded == parts.reduce(0) { $0 + $1.handshakes.succeeded })
        #expect(merged.packets.sent == parts.reduce(0) { $0 + $1.packets.sent })
        #expect(merged.latency.rtt?.count == parts.reduce(0) { $0 + ($1.latency.rtt?.count ?? 0) })
        for file in ["report.html", "metrics.om", "metrics.json", "script.yaml"] {
            #expect(FileManager.default.fileExists(atPath: root + "/merged/" + file), "\(file)")
        }

        // `skirmish merge` on the run's folder, into another folder: the same figures, the table says how it was made.
        let again = directory.appendingPathComponent("again").path
        let merge = try await CommandLineTests.run(["merge", root, "--out", again])
        #expect(merge.status == 0, "\(merge.stderr)")
        #expect(merge.stdout.contains("merged from 2 shards: 0/2 passed, 1/2 passed"), "\(merge.stdout)")
        #expect(try RunSummary.load(path: again + "/summary.json").packets == merged.packets)
        // Merging into a folder holding a shard's results is refused.
        let intoShard = try await CommandLineTests.run(["merge", root, "--out", root + "/0"])
        #expect(intoShard.status == 2)
        #expect(intoShard.stderr.contains("already holds a shard's or a run's results"), "\(intoShard.stderr)")

        // A shard of another run beside them is refused, naming both folders; a missing shard too.
        let other = directory.appendingPathComponent("other/1").path
        let stray = try await shard(1, run: "merge-cli-2", out: other)
        #expect(stray.status == 0, "\(stray.stderr)")
        #expect(stray.stderr.contains("shard 0 has not finished"), "\(stray.stderr)")
        let mixed = try await CommandLineTests.run(["merge", root + "/0", other])
        #expect(mixed.status == 2)
        #expect(mixed.stderr.contains("their run ids are merge-cli-1 and merge-cli-2"), "\(mixed.stderr)")
        let missing = try await CommandLineTests.run(["merge", root + "/0"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("shard 1 is not among the folders given"), "\(missing.stderr)")
        let allowed = try await CommandLineTests.run(
            ["merge", root + "/0", "--allow-missing", "--out", directory.appendingPathComponent("partial").path])
        #expect(allowed.status == 99, "a run missing a shard does not pass")
    }

    @Test("with --merge, the shard that merges exits with the run's verdict and the others not with their slice's")
    func theMergedVerdictIsTheExitStatus() async throws {
        let directory = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("failing.yaml")
        // A threshold no run can meet: every slice fails it, and so does the run.
        try Self.script.replacingOccurrences(of: "handshake_failure_rate: \"< 50%\"", with: "errors: \"> 1000000\"")
            .write(to: script, atomically: true, encoding: .utf8)
        let root = directory.appendingPathComponent("failing-1").path
        func shard(_ index: Int) async throws -> CommandLineTests.Finished {
            try await CommandLineTests.run(
                [
                    "swarm", script.path, "--shard", "\(index)/2", "--run-id", "failing-1", "--out", root + "/\(index)",
                    "--merge", "--plain-progress",
                ], limit: .seconds(120))
        }
        async let first = shard(0)
        async let second = shard(1)
        let shards = try await [first, second]
        let merged = try RunSummary.load(path: root + "/merged/summary.json")
        #expect(!merged.passed)
        // The shards that wrote the merge exit 99 (at least the last one did); a shard that did not merge exits 0.
        #expect(shards.contains { $0.stderr.contains("merged into") })
        for finished in shards {
            #expect(finished.status == (finished.stderr.contains("merged into") ? 99 : 0), "\(finished.stderr)")
        }
        // Each slice's own verdict stays in its summary.
        #expect(try [0, 1].allSatisfy { !(try RunSummary.load(path: root + "/\($0)/summary.json")).passed })
    }

    @Test("--merge on a run that is not sharded is bad input")
    func mergeNeedsShards() async throws {
        let directory = try CommandLineTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("merge.yaml")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let finished = try await CommandLineTests.run(["swarm", script.path, "--merge", "--out", directory.path])
        #expect(finished.status == 2)
        #expect(finished.stderr.contains("--merge: this run is not sharded"), "\(finished.stderr)")
    }
}
