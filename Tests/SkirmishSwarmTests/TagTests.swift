import SkirmishTelemetry
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// A persona's `tags`: labels on every series its bots produce, filterable in thresholds, bounded in number.
@Suite struct TagTests {
    static let yaml = """
        name: tagged
        personas:
          - {name: paying, game: puck, tags: {tier: premium, region: eu}}
          - {name: free, game: puck, tags: {tier: free}}
          - {name: plain, game: snap}
        thresholds:
          rtt_p99{tier:premium}: "< 80ms"
          errors{region:eu, game:puck}: "== 0"
        """

    @Test func tagsAreReadAndThresholdsMayFilterOnThem() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.yaml, file: "t.yaml")
        #expect(script.personas.map(\.tags) == [["tier": "premium", "region": "eu"], ["tier": "free"], [:]])
        #expect(script.tagNames == ["region", "tier"])
        #expect(script.thresholds.map(\.filter) == [["tier": "premium"], ["region": "eu", "game": "puck"]])
        #expect(script.thresholds[0].description == "rtt_p99{tier:premium} < 80ms")
    }

    @Test func everySeriesOfATaggedPersonaCarriesItsTagsAndTheOthersCarryThemEmpty() throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.yaml, file: "t.yaml")
        let shard = MetricsShard(constantLabels: ["run": "r", "shard": "0"], tagNames: script.tagNames)
        let meters = script.personas.map {
            Meters(shard: shard, spec: $0, plan: Meters.Plan(of: $0, in: .builtIn, protocolName: "snap"))
        }
        shard.record(meters[0].rtt, seconds: 0.2)
        shard.record(meters[1].rtt, seconds: 0.01)
        // Series made on first use carry the tags too: an error kind, a check, bytes by packet type.
        meters[0].error("resume_failed")
        meters[0].check("late_reply", passed: false)
        meters[0].sent(kind: 0, bytes: 40)
        let snapshot = shard.snapshot(at: 0)
        for family in [SkirmishMetrics.errors, SkirmishMetrics.checksFailed, SkirmishMetrics.packetBytesSent] {
            let made = snapshot.series(of: family, where: ["persona": "paying"])
            #expect(!made.isEmpty, "\(family.name)")
            #expect(made.allSatisfy { $0.labels["tier"] == "premium" && $0.labels["region"] == "eu" }, "\(family.name)")
        }
        let paying = snapshot.series(of: SkirmishMetrics.bytesSent, where: ["persona": "paying"])
        #expect(paying.count == 1)
        #expect(paying.allSatisfy { $0.labels["tier"] == "premium" && $0.labels["region"] == "eu" })
        let plain = snapshot.series(of: SkirmishMetrics.bytesSent, where: ["persona": "plain"])
        #expect(plain.allSatisfy { $0.labels["tier"] == "" && $0.labels["region"] == "" }, "one shape per family")
        // The filter reads the tagged persona alone.
        let reader = SnapshotReader(snapshot: snapshot, legit: script.personas.map(\.name))
        let premium = script.thresholds[0]
        let p99 = premium.metric.value(of: premium.metric.reading(reader.scoped(to: premium)))
        #expect(try #require(p99) > 0.1)
        // Tags add labels, never series: one value per persona.
        let untagged = try Catalogue.builtIn.scriptLoader.parse(
            Self.yaml.replacingOccurrences(of: ", tags: {tier: premium, region: eu}", with: "")
                .replacingOccurrences(of: ", tags: {tier: free}", with: "")
                .replacingOccurrences(
                    of: "thresholds:\n  rtt_p99{tier:premium}: \"< 80ms\"\n  errors{region:eu, game:puck}: \"== 0\"",
                    with: ""),
            file: "u.yaml")
        #expect(untagged.tagNames.isEmpty)
        let planned = Catalogue.builtIn.plannedSeries(of: script)
        #expect(planned == Catalogue.builtIn.plannedSeries(of: untagged))
        #expect(planned > 3 * 20 && planned < Catalogue.maxSeries, "\(planned)")
    }

    @Test(
        arguments: [
            ("{persona: x}", "would replace a label the series already carry", "choose another name"),
            ("{1tier: a}", "is not a label name", "not starting with a digit"),
            ("{__meta: a}", "is not a label name", nil),
            ("{tier: \"a b\"}", "must be 1–64 letters", nil),
            ("{a: 1, b: 1, c: 1, d: 1, e: 1, f: 1, g: 1, h: 1, i: 1}", "has 9 tags, above the limit of 8", nil),
        ] as [(String, String, String?)])
    func aBadTagIsRefusedWithItsLine(tags: String, message: String, hint: String?) {
        expectRefusal(
            "name: t\npersonas:\n  - {name: p, game: puck, tags: \(tags)}", line: 3, message: message, hint: hint)
    }

    @Test func aThresholdOnATagValueNoPersonaCarriesIsRefused() {
        expectRefusal(
            "name: t\npersonas: [{name: p, game: puck, tags: {tier: free}}]\nthresholds: {\"rtt_p99{tier:gold}\": \"< 1s\"}",
            line: 3, message: "no tier `gold` in this script", hint: "its tiers: free")
    }
}
