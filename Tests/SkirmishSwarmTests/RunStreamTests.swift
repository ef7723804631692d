import Foundation
import SkirmishTelemetry
import SkirmishTestSupport
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// `--out-stream` and `--out-csv`: a line a second per persona, whole lines only, exact when added up, capped.
@Suite struct RunStreamTests {
    static let script = try! Catalogue.builtIn.scriptLoader.parse(
        """
        name: s
        personas: [{name: a, game: puck}, {name: b, game: snap}, {name: bad, game: puck, behavior: rogue}]
        """, file: "s.yaml")

    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("skirmish-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func everySecondOfEveryLegitimatePersonaIsALineAndTheLinesAddUpExactly() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("s.jsonl").path
        let csv = folder.appendingPathComponent("s.csv").path
        let stream = try RunStream(
            json: json, csv: csv, script: Self.script, run: "r1", shard: Shard(index: 1, count: 2),
            startedAt: Date(timeIntervalSince1970: 0))
        let shard = MetricsShard(constantLabels: ["run": "r1", "shard": "1"])
        let rtt = shard.histogram(SkirmishMetrics.rtt, ["game": "puck", "persona": "a"])
        let errors = shard.counter(SkirmishMetrics.errors, ["game": "snap", "persona": "b", "kind": "x"])
        let bots = shard.gauge(SkirmishMetrics.botsConnected, ["game": "puck", "persona": "a"])
        shard.add(bots, 5)
        for second in 1...4 {
            for sample in 0..<(100 * second) { shard.record(rtt, seconds: 0.001 * Double(sample % 97 + 1)) }
            if second == 3 { shard.add(errors, 7) }
            stream.record(shard.snapshot(at: 0), at: Double(second))
        }
        #expect(stream.finish(shard.snapshot(at: 0), at: 4.5).isEmpty, "the last half second has nothing new")

        let lines = try String(contentsOfFile: json, encoding: .utf8).split(separator: "\n")
        let objects = try lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 10, "five stretches × two legitimate personas (the rogue one is never written)")
        #expect(Set(objects.compactMap { $0["persona"] as? String }) == ["a", "b"])
        #expect(objects.allSatisfy { $0["run"] as? String == "r1" && $0["shard"] as? String == "1/2" })
        let a = objects.filter { $0["persona"] as? String == "a" }
        #expect(a.map { ($0["rtt"] as? [String: Any])?["count"] as? Int ?? 0 } == [100, 200, 300, 400, 0])
        #expect(a.allSatisfy { $0["bots"] as? Int == 5 })
        #expect(objects.filter { $0["persona"] as? String == "b" }.map { $0["errors"] as? Int } == [0, 0, 7, 0, 0])

        // Adding the lines' HDR counts value by value gives the whole run's distribution exactly.
        var merged: [UInt64: UInt64] = [:]
        for line in a {
            guard let hdr = (line["rtt"] as? [String: Any])?["hdr"] as? [String: Any],
                let values = hdr["values"] as? [NSNumber], let counts = hdr["counts"] as? [NSNumber]
            else { continue }
            for (value, count) in zip(values, counts) { merged[value.uint64Value, default: 0] += count.uint64Value }
        }
        let whole = SparseDistribution(try #require(shard.snapshot(at: 0).histogram(SkirmishMetrics.rtt)))
        #expect(merged == Dictionary(uniqueKeysWithValues: zip(whole.values, whole.counts)))

        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        #expect(rows.count == 11)
        let header = rows[0].split(separator: ",", omittingEmptySubsequences: false)
        #expect(
            rows.dropFirst().allSatisfy {
                $0.split(separator: ",", omittingEmptySubsequences: false).count == header.count
            })
        #expect(rows[1].hasPrefix("1.0,1970-01-01T00:00:01Z,r1,1/2,a,puck,1.0,5,"), "\(rows[1])")
    }

    @Test func aFileStopsGrowingAtItsCapWithALastLineSayingSo() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("capped.jsonl").path
        let stream = try RunStream(
            json: json, csv: nil, script: Self.script, run: "r", shard: .whole, startedAt: Date(), limit: 2_000)
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"])
        for second in 1...50 { stream.record(shard.snapshot(at: 0), at: Double(second)) }
        let notes = stream.finish(shard.snapshot(at: 0), at: 51)
        #expect(notes.count == 1 && notes[0].contains("reached its cap"), "\(notes)")
        let text = try String(contentsOfFile: json, encoding: .utf8)
        #expect(text.utf8.count <= 2_000 + 64)
        #expect(text.hasSuffix("{\"truncated\":true,\"limit_bytes\":2000}\n"))
        #expect(
            text.split(separator: "\n").allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    @Test func aFileThatCannotBeOpenedIsNamed() throws {
        #expect {
            try RunStream(
                json: "/nonexistent-folder-\(UUID().uuidString)/s.jsonl", csv: nil, script: Self.script, run: "r",
                shard: .whole, startedAt: Date())
        } throws: { error in
            (error as? RunStream.FileError).map { $0.path.hasSuffix("/s.jsonl") && !$0.reason.isEmpty } ?? false
        }
    }
}
