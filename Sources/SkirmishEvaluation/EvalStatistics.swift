/// Samples kept whole for exact percentiles (an evaluation holds at most a few hundred thousand).
package struct Samples: Sendable {
    private(set) var values: [Double] = []

    package mutating func add(_ value: Double) { values.append(value) }

    package mutating func merge(_ other: Samples) { values.append(contentsOf: other.values) }

    package var count: Int { values.count }

    /// The nearest-rank percentile (`q` in 0…1); `nil` without samples.
    package func percentile(_ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    package var mean: Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
}

/// A proportion with its Wilson score interval.
package struct Proportion: Sendable, Codable {
    package var successes: Int
    package var trials: Int

    package init(successes: Int, trials: Int) {
        self.successes = successes
        self.trials = trials
    }

    package var rate: Double { trials == 0 ? 0 : Double(successes) / Double(trials) }

    /// The Wilson score interval at 95 % (z = 1.96): honest at rates near 0 or 1, where the normal interval is not.
    package var wilson95: (low: Double, high: Double) {
        guard trials > 0 else { return (0, 1) }
        let z = 1.959964
        let n = Double(trials)
        let p = rate
        let centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        let half = z * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot() / (1 + z * z / n)
        return (max(0, centre - half), min(1, centre + half))
    }
}
