import SkirmishScript

/// Deals personas to bots in proportion to their weights, interleaved so that any run of bots is already mixed.
///
/// Uses smooth weighted round-robin (as nginx does for upstreams): weights 8 and 2 give `A A A B A A A A B A`, not
/// eight As then two Bs, so a ramp's first ten bots already hold both personas. The deal is a pure function of the
/// bot's number within its shard, so every shard gets the same mix and runs are reproducible.
package struct PersonaTable: Sendable, Hashable {
    package let personas: [Persona]
    /// One cycle of persona indices, as long as the sum of the weights.
    let cycle: [Int]

    package init(_ personas: [Persona]) {
        precondition(!personas.isEmpty, "a script has at least one persona")
        self.personas = personas
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
    }

    /// The persona of the bot numbered `number` within this shard.
    package func persona(for number: Int) -> Persona { personas[index(for: number)] }

    /// The index into `personas` of bot `number`.
    package func index(for number: Int) -> Int { cycle[number % cycle.count] }
}
