import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

@Suite struct LoadPlanTests {
    func script(_ profile: [Stage], personas: [Persona]? = nil) -> Script {
        Script(
            name: "t", summary: "", profile: profile,
            personas: personas ?? [persona("a", weight: 1)], thresholds: [])
    }

    func persona(_ name: String, weight: Int) -> Persona {
        Persona(
            name: name, weight: weight, game: .puck, behavior: .chaser, seats: 2, inputRate: 30, link: .perfect,
            transport: nil, difficulty: nil, snapReaction: nil, chatEvery: nil, reconnectEvery: nil, offlineFor: nil,
            rogueRate: nil, steps: [.playUntilMatchOver, .repeat(times: nil)])
    }

    @Test func rampsAndHoldsFollowTheProfile() throws {
        let plan = try LoadPlan(
            script: script([
                .ramp(to: 100, over: .seconds(10)), .hold(for: .seconds(20)), .ramp(to: 0, over: .seconds(10)),
            ]))
        #expect(plan.duration == .seconds(40))
        #expect(plan.closedBots(at: .zero) == 0)
        #expect(plan.closedBots(at: .seconds(5)) == 50)
        #expect(plan.closedBots(at: .seconds(10)) == 100)
        #expect(plan.closedBots(at: .seconds(29)) == 100)
        #expect(plan.closedBots(at: .seconds(35)) == 50)
        #expect(plan.closedBots(at: .seconds(40)) == 0)
        #expect(plan.peakClosedBots == 100)
    }

    @Test func botsOverrideScalesThePeakAndDurationStretchesTheHolds() throws {
        let plan = try LoadPlan(
            script: script([
                .ramp(to: 1_000, over: .seconds(30)), .hold(for: .seconds(300)), .ramp(to: 0, over: .seconds(10)),
            ]),
            overrides: .init(bots: 50, duration: .seconds(100)))
        #expect(
            plan.scenarios[0].stages == [
                .ramp(to: 50, over: .seconds(30)), .hold(for: .seconds(60)), .ramp(to: 0, over: .seconds(10)),
            ])
        let short = try LoadPlan(
            script: script([.ramp(to: 10, over: .seconds(30)), .hold(for: .seconds(30))]),
            overrides: .init(duration: .seconds(15)))
        #expect(short.duration == .seconds(15))
        #expect(short.scenarios[0].stages.first == .ramp(to: 10, over: .seconds(7.5)))
    }

    @Test func aScriptWithoutAProfileUsesBotsAndDuration() throws {
        let plan = try LoadPlan(script: script([]), overrides: .init(bots: 20, duration: .seconds(60)))
        #expect(plan.scenarios[0].stages == [.ramp(to: 20, over: .seconds(6)), .hold(for: .seconds(54))])
    }

    @Test func rateWithoutAnArriveStageIsRefusedWithAHint() {
        #expect {
            _ = try LoadPlan(script: script([.hold(for: .seconds(1))]), overrides: .init(rate: 5))
        } throws: { error in
            "\(error)".contains("arrive")
        }
    }

    @Test func shardsSplitBotsWithoutOverlapOrGap() throws {
        for count in 1...7 {
            for total in 0...50 {
                let shares = (0..<count).map { Shard(index: $0, count: count).share(of: total) }
                #expect(shares.reduce(0, +) == total)
                #expect(shares.max()! - shares.min()! <= 1)
            }
        }
        #expect(Shard("2/4") == Shard(index: 2, count: 4))
        #expect(Shard("4/4") == nil)
        #expect(Shard("a/b") == nil)
        #expect(
            try Shard.fromEnvironment(["JOB_COMPLETION_INDEX": "3", "JOB_COMPLETIONS": "8"])
                == Shard(index: 3, count: 8))
        #expect(try Shard.fromEnvironment([:]) == nil)
        // A Job whose variables name no shard is an error, never a silent run of every bot in every copy. Kubernetes
        // sets only the index: without the manifest's count, pod 0 would take every bot.
        for bad in [
            ["JOB_COMPLETION_INDEX": "8", "JOB_COMPLETIONS": "8"],
            ["JOB_COMPLETION_INDEX": "x", "JOB_COMPLETIONS": "2"],
            ["JOB_COMPLETION_INDEX": "0"], ["JOB_COMPLETION_INDEX": "3"],
        ] {
            #expect(throws: Shard.EnvironmentError.self) { try Shard.fromEnvironment(bad) }
        }
        // The manifest applied without its kustomization: the placeholder is named, and the way to apply it.
        #expect {
            try Shard.fromEnvironment([
                "JOB_COMPLETION_INDEX": "0", "JOB_COMPLETIONS": "set from completions by kubectl apply -k",
            ])
        } throws: { error in
            "\(error)".contains("is not a number") && "\(error)".contains("kubectl apply -k deploy/")
        }
    }

    /// The `shard` label is the bare index: no `/` to end an InfluxQL regex or need escaping in a Pushgateway path.
    @Test func shardLabelIsThePlainIndex() throws {
        for shard in [Shard.whole, Shard(index: 2, count: 3), Shard(index: 41, count: 100)] {
            #expect(shard.description == "\(shard.index)")
            #expect(shard.description.allSatisfy { $0.isNumber })
            #expect(shard.fraction == "\(shard.index)/\(shard.count)")
        }
    }

    @Test func arrivalsAreScheduledInAdvanceAndDealtToShards() throws {
        let stages: [Stage] = [.hold(for: .seconds(1)), .arrive(rate: 10, for: .seconds(2), max: 100)]
        let whole = try LoadPlan(script: script(stages))
        let all = whole.arrivals(from: .zero, to: .seconds(10))
        #expect(all.count == 20)
        #expect(all.first?.at == .seconds(1))
        #expect(all.last?.at == .seconds(1) + .milliseconds(1_900))
        // Pieces of the timeline give the same arrivals as the whole.
        var pieces: [LoadPlan.Arrival] = []
        var t = Duration.zero
        while t < .seconds(4) {
            pieces += whole.arrivals(from: t, to: t + .milliseconds(130))
            t += .milliseconds(130)
        }
        #expect(pieces == all)
        let shards = try (0..<3).map { try LoadPlan(script: script(stages), shard: Shard(index: $0, count: 3)) }
        let dealt = shards.flatMap { $0.arrivals(from: .zero, to: .seconds(10)) }.map(\.number).sorted()
        #expect(dealt == all.map(\.number))
    }

    @Test func personasAreInterleavedInProportionToWeights() {
        let table = PersonaTable([persona("a", weight: 8), persona("b", weight: 2)])
        let first10 = (0..<10).map { table.persona(for: $0).name }
        #expect(first10.filter { $0 == "a" }.count == 8)
        #expect(first10.prefix(5).contains("b"), "the mix starts early: \(first10)")
        let three = PersonaTable([persona("a", weight: 5), persona("b", weight: 3), persona("c", weight: 2)])
        let counts = Dictionary(grouping: (0..<1_000).map { three.persona(for: $0).name }, by: { $0 }).mapValues(
            \.count)
        #expect(counts == ["a": 500, "b": 300, "c": 200])
    }

    @Test func everyShardsArrivalsHoldTheScriptsMix() {
        // Weights 1:1 over two shards: dealt by the global number alone, each shard would get one persona.
        let personas = [persona("a", weight: 1), persona("b", weight: 1)]
        for count in [2, 4] {
            var run = [0, 0]
            for index in 0..<count {
                let table = PersonaTable(personas, shard: Shard(index: index, count: count))
                var own = [0, 0]
                for number in stride(from: index, to: 400, by: count) { own[table.index(forArrival: number)] += 1 }
                #expect(abs(own[0] - own[1]) <= 1, "shard \(index)/\(count): \(own)")
                run[0] += own[0]
                run[1] += own[1]
            }
            #expect(abs(run[0] - run[1]) <= count, "\(count) shards: \(run)")
        }
    }

    @Test(arguments: [[8, 3, 3, 2], [5, 3, 2], [1, 1, 1], [1, 1], [7, 1], [13, 5, 4, 3, 2, 1]])
    func everyShardAndTheRunTogetherHoldTheScriptsMix(weights: [Int]) {
        let personas = weights.enumerated().map { persona("p\($0.offset)", weight: $0.element) }
        let total = Double(weights.reduce(0, +))
        func off(_ counts: [Int], of bots: Int) -> Double {
            zip(counts, weights).map { abs(Double($0) - Double(bots) * Double($1) / total) }.max() ?? 0
        }
        for count in [1, 2, 3, 7] {
            let peak = 199
            let tables = (0..<count).map {
                PersonaTable(personas, shard: Shard(index: $0, count: count), closedBots: peak)
            }
            for bots in 1...peak {
                var run = [Int](repeating: 0, count: weights.count)
                for (index, table) in tables.enumerated() {
                    let share = Shard(index: index, count: count).share(of: bots)
                    var own = [Int](repeating: 0, count: weights.count)
                    for local in 0..<share { own[table.index(forClosed: local)] += 1 }
                    for persona in weights.indices { run[persona] += own[persona] }
                    // Each shard's bots are mixed like the whole: no shard starved of a persona.
                    #expect(off(own, of: share) < 1.4, "shard \(index)/\(count) at \(bots) bots: \(own)")
                }
                // One process: smooth weighted round-robin, within one of each share; shards together within 1.2
                // (1.1 before the last bots of a ramp were evened to the exact shares at its peak).
                #expect(off(run, of: bots) < (count == 1 ? 1 : 1.2), "\(count) shards at \(bots) bots: \(run)")
                if bots == peak {
                    // At the run's peak the shards together hold exactly each persona's largest-remainder share.
                    let exact = PersonaTable.largestRemainder(weights: weights, total: peak).map { Int($0) }
                    #expect(run == exact, "\(count) shards at the peak: \(run), exact \(exact)")
                }
            }
        }
    }

    @Test(
        "at every peak from 1 to 200 bots, each shard holds its mix and the run its exact shares",
        arguments: [[4, 2, 3, 2, 1], [6, 3, 1], [2, 5, 3], [8, 3, 3, 2], [1, 1], [13, 5, 4, 3, 2, 1]])
    func everyPeakKeepsEachShardsMixAndTheRunExact(weights: [Int]) {
        let personas = weights.enumerated().map { persona("p\($0.offset)", weight: $0.element) }
        let total = Double(weights.reduce(0, +))
        func off(_ counts: [Int], of bots: Int) -> Double {
            zip(counts, weights).map { abs(Double($0) - Double(bots) * Double($1) / total) }.max() ?? 0
        }
        var worstShard = 0.0
        var worstRun = 0.0
        for count in [1, 2, 3, 4, 5, 7] {
            for peak in 1...200 {
                var run = [Int](repeating: 0, count: weights.count)
                for index in 0..<count {
                    let shard = Shard(index: index, count: count)
                    let own = PersonaTable(personas, shard: shard, closedBots: peak).peaks(of: shard.share(of: peak))
                    worstShard = max(worstShard, off(own, of: shard.share(of: peak)))
                    for persona in weights.indices { run[persona] += own[persona] }
                }
                worstRun = max(worstRun, off(run, of: peak))
                let exact = PersonaTable.largestRemainder(weights: weights, total: peak).map { Int($0) }
                #expect(run == exact, "\(weights) over \(count) shards at \(peak): \(run), exact \(exact)")
            }
        }
        #expect(worstShard < 1.4, "\(weights): a shard \(worstShard) bots off its share")
        #expect(worstRun < 1, "\(weights): the run \(worstRun) off (largest remainder is within one)")
    }

    @Test("every persona's share of a sharded run's peak is its largest-remainder share, exactly")
    func shardedSharesAreExactAtThePeak() {
        // The case the review found: 40 bots of quickstart's weights over three shards drifted (chaser 15 vs 13).
        let weights = [5, 2, 2, 2, 1]
        let personas = weights.enumerated().map { persona("p\($0.offset)", weight: $0.element) }
        #expect(PersonaTable.largestRemainder(weights: weights, total: 40) == [17, 7, 7, 6, 3])
        #expect(PersonaTable.largestRemainder(weights: [1, 1, 1], total: 10) == [4, 3, 3])
        for peak in [1, 2, 7, 40, 41, 100, 1_000] {
            for count in [1, 2, 3, 4, 8] {
                var run = [Int](repeating: 0, count: weights.count)
                for index in 0..<count {
                    let shard = Shard(index: index, count: count)
                    let table = PersonaTable(personas, shard: shard, closedBots: peak)
                    for persona in table.peaks(of: shard.share(of: peak)).indices {
                        run[persona] += table.peaks(of: shard.share(of: peak))[persona]
                    }
                }
                let exact = PersonaTable.largestRemainder(weights: weights, total: peak).map { Int($0) }
                #expect(run == exact, "\(peak) bots over \(count) shards: \(run), exact \(exact)")
            }
        }
    }
}
