/// Percentiles of a set of samples (nearest rank: the smallest sample with at least that share at or below it).
package struct Percentiles: Sendable {
    private let sorted: [Double]

    package init(_ samples: [Double]) {
        sorted = samples.sorted()
    }

    package var count: Int { sorted.count }

    /// The sample at `fraction` (0…1) of the way up; NaN without samples.
    package func at(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
    }

    package var max: Double { sorted.last ?? .nan }
}
