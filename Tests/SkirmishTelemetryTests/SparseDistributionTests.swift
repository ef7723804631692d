import Foundation
import Testing

@testable import SkirmishTelemetry

/// The sparse form of a distribution answers exactly as the HDR histogram it was read from, and adds, subtracts and
/// round-trips through JSON without losing a count.
@Suite struct SparseDistributionTests {
    static func histogram(_ values: [Double]) -> HistogramValue {
        var histogram = HistogramValue(scale: .seconds)
        for value in values { histogram.record(value) }
        return histogram
    }

    static func randomLatencies(count: Int, seed: UInt64, scale: Double = 0.01) -> [Double] {
        var random = SplitMix(state: seed)
        // Log-normal-ish: most near `scale`, a long tail.
        return (0..<count).map { _ in
            let u = Double(random.next() % 1_000_000 + 1) / 1_000_001
            return scale * exp(2 * (u - 0.5)) * (u > 0.99 ? 20 : 1)
        }
    }

    @Test(arguments: [1, 7, 1_000, 20_000])
    func quantilesMatchTheHistogramExactly(count: Int) {
        let histogram = Self.histogram(Self.randomLatencies(count: count, seed: UInt64(count)))
        let sparse = SparseDistribution(histogram)
        #expect(sparse.total == histogram.count)
        for q in [0, 0.001, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1] {
            #expect(sparse.quantile(q) == histogram.quantile(q), "q = \(q)")
        }
    }

    @Test func addingAndSubtractingAreInverse() {
        let first = Self.randomLatencies(count: 5_000, seed: 1)
        let second = Self.randomLatencies(count: 3_000, seed: 2, scale: 0.05)
        let a = SparseDistribution(Self.histogram(first))
        let both = SparseDistribution(Self.histogram(first + second))
        let b = SparseDistribution(Self.histogram(second))
        var sum = a
        sum.add(b)
        #expect(sum.values == both.values && sum.counts == both.counts && sum.total == 8_000)
        let back = both.subtracting(a)
        #expect(back.values == b.values && back.counts == b.counts)
        #expect(both.subtracting(both).isEmpty)
        #expect(SparseDistribution(resolution: 1e6).quantile(0.5) == nil)
    }

    @Test func itRoundTripsThroughJSONAndRefusesUnsortedValues() throws {
        let sparse = SparseDistribution(Self.histogram(Self.randomLatencies(count: 2_000, seed: 3)))
        let decoded = try JSONDecoder().decode(SparseDistribution.self, from: JSONEncoder().encode(sparse))
        #expect(decoded == sparse)
        #expect(decoded.quantile(0.99) == sparse.quantile(0.99))
        let broken = Data(#"{"resolution": 1000000, "values": [5, 3], "counts": [1, 1]}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SparseDistribution.self, from: broken) }
        let mismatched = Data(#"{"resolution": 1000000, "values": [3, 5], "counts": [1]}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(SparseDistribution.self, from: mismatched) }
    }
}

/// A seeded generator, so each case draws the same values every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
