import SkirmishScript

/// Deals personas to bots in proportion to their weights, interleaved so that any run of bots is already mixed.
///
/// Uses smooth weighted round-robin (as nginx does for upstreams): weights 8 and 2 give `A A A B A A A A B A`, not
/// eight As then two Bs, so a ramp's first ten bots already hold both personas. Any N consecutive bots hold each
/// persona within one of its exact share (N × weight ÷ total).
///
/// A sharded run's closed-model bots need two things at once: each shard's bots mixed like the whole (a shard that
/// held no chaser would fail a `{persona:chaser}` threshold), and the shards together holding the whole run's mix.
/// Dealing within each shard repeats the cycle's start in every shard and drifts the sum (chaser 15 instead of 13 of
/// 40 bots over three shards); dealing by the global number alone starves shards when the shard count and the cycle
/// share a factor (weights 1:1 over two shards: all of one persona in each). So ``init(_:shard:closedBots:)`` deals
/// the run's global bots in order (shard *i* of *n* holds global bots *i*, *i + n*, …), each to the persona furthest
/// below its share of the run so far *plus* its share of that bot's shard so far — the same deficits smooth weighted
/// round-robin keeps, at two levels. Every shard computes the same deal without talking to the others. Then the
/// latest few bots change persona so that at the run's peak each persona holds exactly its largest-remainder share
/// (each change in the shard where it brings both personas closer to that shard's share). Over the shipped weights
/// and 1 to 7 shards, every persona stays within 1.2 bots of its exact share of the run and 1.4 of its share of each
/// shard, at every bot count and every peak up to 200 (`LoadPlanTests`); one process (`0/1`) gets smooth weighted
/// round-robin, within one of its share.
package struct PersonaTable: Sendable, Hashable {
    package let personas: [Persona]
    /// The shard whose closed-model bots ``index(forClosed:)`` deals.
    package let shard: Shard
    /// One cycle of persona indices, as long as the sum of the weights.
    let cycle: [Int]
    /// This shard's closed-model bots' personas, by local number (see the type's discussion).
    let closed: [UInt8]

    /// A table for `shard`, dealing its share of `closedBots` closed-model bots (the run's peak across all shards)
    /// ahead of time; a bot beyond them takes the cycle's persona at its global number.
    package init(_ personas: [Persona], shard: Shard = .whole, closedBots: Int = 0) {
        precondition(!personas.isEmpty, "a script has at least one persona")
        precondition(personas.count <= Int(UInt8.max) + 1, "a persona's index must fit the deal's byte")
        self.personas = personas
        self.shard = shard
        let total = personas.reduce(0) { $0 + $1.weight }
        var current = [Int](repeating: 0, count: personas.count)
        var cycle: [Int] = []
        cycle.reserveCapacity(total)
        for _ in 0..<total {
            for i in personas.indices { current[i] += personas[i].weight }
            let chosen = current.indices.max { current[$0] < current[$1] || (current[$0] == current[$1] && $0 > $1) }!
            current[chosen] -= total
            cycle.append(chosen)
        }
        self.cycle = cycle
        closed = Self.deal(weights: personas.map(\.weight), shard: shard, bots: closedBots)
    }

    /// Shard `shard`'s personas among `bots` global closed-model bots, dealt at two levels (see the type), then
    /// evened to each persona's largest-remainder share of `bots`.
    static func deal(weights: [Int], shard: Shard, bots: Int) -> [UInt8] {
        let total = Int64(weights.reduce(0, +))
        let count = shard.count
        var run = [Int64](repeating: 0, count: weights.count)
        // Per shard and persona, flattened; only as many shards as there are bots ever hold any.
        let shards = min(count, max(bots, 1))
        var held = [Int32](repeating: 0, count: shards * weights.count)
        var sizes = [Int64](repeating: 0, count: shards)
        var dealt = [UInt8](repeating: 0, count: bots)
        for global in 0..<bots {
            let owner = global % count
            var best = 0
            var bestScore = (Int64.min, Int64.min)
            for (persona, weight) in weights.enumerated() {
                // Deficits scaled by the total weight: expected × total − held × total.
                let ofRun = Int64(global + 1) * Int64(weight) - run[persona] * total
                let ofShard = (sizes[owner] + 1) * Int64(weight) - Int64(held[owner * weights.count + persona]) * total
                let score = (ofRun + ofShard, ofRun)
                if score > bestScore {
                    bestScore = score
                    best = persona
                }
            }
            run[best] += 1
            held[owner * weights.count + best] += 1
            sizes[owner] += 1
            dealt[global] = UInt8(best)
        }
        // The greedy deal keeps every persona within about one bot of its share of the run; a few bots then change
        // persona so that each holds exactly its largest-remainder share of `bots`. Each change takes the latest bot
        // of a persona over its share, in the shard where that persona is furthest over its shard's share and the
        // one it becomes furthest under (so every shard's mix gets closer to its own share, never further), and the
        // latest such bot, so only the last bots of a ramp see it.
        let exact = largestRemainder(weights: weights, total: bots)
        while let over = run.indices.filter({ run[$0] > exact[$0] }).max(by: {
            run[$0] - exact[$0] < run[$1] - exact[$1]
        }),
            let under = run.indices.filter({ run[$0] < exact[$0] }).max(by: {
                exact[$0] - run[$0] < exact[$1] - run[$1]
            })
        {
            var chosen = -1
            var chosenScore = Int64.min
            for global in stride(from: bots - 1, through: 0, by: -1) where dealt[global] == UInt8(over) {
                let owner = global % count
                // How far the shard is over its share of `over` plus under its share of `under`, scaled by the total.
                let size = sizes[owner]
                let score =
                    (Int64(held[owner * weights.count + over]) * total - size * Int64(weights[over]))
                    + (size * Int64(weights[under]) - Int64(held[owner * weights.count + under]) * total)
                if score > chosenScore {
                    chosenScore = score
                    chosen = global
                }
            }
            let owner = chosen % count
            dealt[chosen] = UInt8(under)
            run[over] -= 1
            run[under] += 1
            held[owner * weights.count + over] -= 1
            held[owner * weights.count + under] += 1
        }
        return stride(from: shard.index, to: bots, by: count).map { dealt[$0] }
    }

    /// `total` split in proportion to `weights` by the largest-remainder method: each gets the whole part of its
    /// quota, and the units left go to the largest fractional parts (the earlier persona on a tie).
    static func largestRemainder(weights: [Int], total: Int) -> [Int64] {
        let sum = Int64(weights.reduce(0, +))
        guard sum > 0 else { return weights.map { _ in 0 } }
        var shares = weights.map { Int64(total) * Int64($0) / sum }
        let remainders = weights.map { Int64(total) * Int64($0) % sum }
        var left = Int64(total) - shares.reduce(0, +)
        for persona in remainders.indices.sorted(by: {
            remainders[$0] > remainders[$1] || (remainders[$0] == remainders[$1] && $0 < $1)
        })
        where left > 0 {
            shares[persona] += 1
            left -= 1
        }
        return shares
    }

    /// The persona of the bot numbered `number` across the run.
    package func persona(for number: Int) -> Persona { personas[index(for: number)] }

    /// How many of this shard's first `bots` closed-model bots each persona holds, in `personas` order.
    package func peaks(of bots: Int) -> [Int] {
        var peaks = [Int](repeating: 0, count: personas.count)
        for local in 0..<max(bots, 0) { peaks[index(forClosed: local)] += 1 }
        return peaks
    }

    /// The index into `personas` of the bot numbered `number` across the run.
    package func index(for number: Int) -> Int { cycle[number % cycle.count] }

    /// The index into `personas` of open-model arrival `number` (numbered across the run and dealt to shards
    /// round-robin, as ``LoadPlan/arrivals(from:to:limit:)`` does). Arrivals have no end to deal ahead of time, so
    /// each shard walks the cycle with its own arrivals, from a start spread over the cycle by its index: every
    /// shard's arrivals hold the script's mix (by the global number alone, weights 1:1 over two shards would give
    /// each shard one persona), and the shards together stay within a few arrivals of it.
    package func index(forArrival number: Int) -> Int {
        let start = shard.count > 1 ? shard.index * cycle.count / shard.count : 0
        return cycle[(number / shard.count + start) % cycle.count]
    }

    /// The index into `personas` of this shard's closed-model bot `local` (0, 1, 2 … within the shard): global bot
    /// `local × count + index`, as ``Shard/share(of:)`` deals them.
    package func index(forClosed local: Int) -> Int {
        local < closed.count ? Int(closed[local]) : index(for: local * shard.count + shard.index)
    }
}
