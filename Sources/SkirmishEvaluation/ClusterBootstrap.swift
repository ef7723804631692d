import SkirmishWire

/// A 95 % interval for a proportion measured in sessions: a percentile bootstrap that resamples whole sessions.
///
/// Shots come in sessions (each its own server, client and link, about 50 shots), and shots of one session are not
/// independent: a session whose loop ran late, or whose seed drew a harder run, shifts all its shots together. A
/// Wilson interval treats every shot as independent and is too narrow then — the same setting measured twice in one
/// run gave 978/1000 and 399/400, outside each other's Wilson intervals. Resampling sessions with replacement keeps
/// each session's shots together, so the interval widens with the spread between sessions (Davison & Hinkley,
/// *Bootstrap Methods and their Application*, 1997, §3.8: resampling the clusters).
///
/// Seeded, so a run's report is reproducible. With fewer than two sessions there is nothing to resample and the
/// interval is the Wilson one; with fewer than ``fewSessions`` the percentile bootstrap is known to come out too
/// narrow, so the interval is the wider of the two at each end.
package struct ClusterBootstrap: Sendable {
    /// One session's successes and trials.
    package struct Cluster: Sendable, Hashable {
        package var successes: Int
        package var trials: Int

        package init(successes: Int, trials: Int) {
            self.successes = successes
            self.trials = trials
        }
    }

    /// Below this many sessions the interval is widened to at least the Wilson interval.
    package static let fewSessions = 10

    /// Resamples drawn.
    package var resamples: Int
    /// Seeds the resampling.
    package var seed: UInt64

    package init(resamples: Int = 2_000, seed: UInt64 = 1) {
        self.resamples = resamples
        self.seed = seed
    }

    /// The pooled rate and its 2.5 % and 97.5 % percentile interval over sessions resampled with replacement (each
    /// resample's rate is its successes over its trials); `(0, 0, 1)` without trials.
    package func interval(_ clusters: [Cluster]) -> (rate: Double, low: Double, high: Double) {
        let used = clusters.filter { $0.trials > 0 }
        let pooled = Proportion(
            successes: used.reduce(0) { $0 + $1.successes }, trials: used.reduce(0) { $0 + $1.trials })
        guard used.count >= 2 else {
            let wilson = pooled.wilson95
            return (pooled.rate, wilson.low, wilson.high)
        }
        var random = SeededRandom(seed: seed)
        var rates: [Double] = []
        rates.reserveCapacity(resamples)
        for _ in 0..<max(resamples, 1) {
            var successes = 0
            var trials = 0
            for _ in 0..<used.count {
                let pick = used[Int.random(in: 0..<used.count, using: &random)]
                successes += pick.successes
                trials += pick.trials
            }
            rates.append(Double(successes) / Double(trials))
        }
        rates.sort()
        func at(_ q: Double) -> Double {
            let rank = Int((q * Double(rates.count)).rounded(.up))
            return rates[min(max(rank, 1), rates.count) - 1]
        }
        guard used.count < Self.fewSessions else { return (pooled.rate, at(0.025), at(0.975)) }
        let wilson = pooled.wilson95
        return (pooled.rate, min(at(0.025), wilson.low), max(at(0.975), wilson.high))
    }

    /// The mean of `values` (one per independent session, such as a match's goals) and its 2.5 % and 97.5 %
    /// percentile interval over the values resampled with replacement; `(0, 0, 0)` without values, and the mean
    /// itself at both ends with one.
    package func meanInterval(_ values: [Double]) -> (mean: Double, low: Double, high: Double) {
        guard !values.isEmpty else { return (0, 0, 0) }
        let mean = values.reduce(0, +) / Double(values.count)
        guard values.count >= 2 else { return (mean, mean, mean) }
        var random = SeededRandom(seed: seed)
        var means: [Double] = []
        means.reserveCapacity(resamples)
        for _ in 0..<max(resamples, 1) {
            var sum = 0.0
            for _ in 0..<values.count { sum += values[Int.random(in: 0..<values.count, using: &random)] }
            means.append(sum / Double(values.count))
        }
        means.sort()
        func at(_ q: Double) -> Double {
            let rank = Int((q * Double(means.count)).rounded(.up))
            return means[min(max(rank, 1), means.count) - 1]
        }
        return (mean, at(0.025), at(0.975))
    }
}
