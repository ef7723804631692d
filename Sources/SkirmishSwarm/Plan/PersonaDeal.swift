import SkirmishScript

/// Which persona each of this shard's bots plays, across every scenario of the run.
///
/// Each scenario deals its own personas among its own bots (a ``PersonaTable`` per scenario), so a scenario's mix
/// never leaks into another's. Closed-model bots are numbered in one space per shard: scenario *s*'s local bot *k*
/// is bot `closedBase[s] + k`, where each scenario's block is as large as this shard's share of its peak; open-model
/// arrivals carry their scenario. A single-profile script is one scenario over every persona, dealt exactly as a
/// ``PersonaTable`` of the whole script deals it.
package struct PersonaDeal: Sendable, Hashable {
    /// Every persona of the script, in script order.
    package let personas: [Persona]
    /// One table per scenario, over that scenario's personas.
    let tables: [PersonaTable]
    /// Each scenario's first persona's position in ``personas``.
    let firstPersona: [Int]
    /// Each scenario's first closed-model bot number on this shard.
    package let closedBase: [Int]

    /// The deal of `personas` over `plan`'s scenarios, for `plan`'s shard.
    package init(_ personas: [Persona], plan: LoadPlan) {
        self.personas = personas
        var tables: [PersonaTable] = []
        var firstPersona: [Int] = []
        var closedBase: [Int] = []
        var base = 0
        for scenario in plan.scenarios {
            tables.append(
                PersonaTable(
                    Array(personas[scenario.personas]), shard: plan.shard, closedBots: scenario.runPeakClosedBots))
            firstPersona.append(scenario.personas.lowerBound)
            closedBase.append(base)
            base += plan.shard.share(of: scenario.runPeakClosedBots)
        }
        self.tables = tables
        self.firstPersona = firstPersona
        self.closedBase = closedBase
    }

    /// One scenario over every persona, with no closed-model bots dealt ahead (an agent runner's single persona).
    package init(single personas: [Persona]) {
        self.personas = personas
        tables = [PersonaTable(personas)]
        firstPersona = [0]
        closedBase = [0]
    }

    /// The scenario of closed-model bot `number` (this shard's numbering), and the bot's number within it.
    package func scenario(ofClosed number: Int) -> (scenario: Int, local: Int) {
        var scenario = closedBase.count - 1
        while scenario > 0, closedBase[scenario] > number { scenario -= 1 }
        return (scenario, number - closedBase[scenario])
    }

    /// The position in ``personas`` of this shard's closed-model bot `number`.
    package func index(forClosed number: Int) -> Int {
        let (scenario, local) = scenario(ofClosed: number)
        return firstPersona[scenario] + tables[scenario].index(forClosed: local)
    }

    /// The position in ``personas`` of `arrival`.
    package func index(forArrival arrival: LoadPlan.Arrival) -> Int {
        firstPersona[arrival.scenario] + tables[arrival.scenario].index(forArrival: arrival.local)
    }

    /// How many of each scenario's first `bots[s]` closed-model bots of this shard each persona holds, in script
    /// order.
    package func peaks(of bots: [Int]) -> [Int] {
        var peaks = [Int](repeating: 0, count: personas.count)
        for (scenario, table) in tables.enumerated() where scenario < bots.count {
            for (offset, count) in table.peaks(of: bots[scenario]).enumerated() {
                peaks[firstPersona[scenario] + offset] += count
            }
        }
        return peaks
    }
}
