import SkirmishScript
import SkirmishWire

/// How long a bot waits before trying again after a failed handshake or a lost connection: capped exponential
/// backoff with full jitter.
///
/// The *n*-th retry in a row waits a uniformly random time in [``floor``, min(``cap``, ``base`` × 2ⁿ)]. Full jitter
/// is what spreads a crowd: when a server restarts, thousands of bots that lost it at the same instant come back
/// over the whole window instead of in one synchronised storm, and each further failure widens the window. Pure —
/// the random source is passed in — so a seeded run replays the same delays.
struct ReconnectBackoff: Sendable, Hashable {
    /// The first window's ceiling is twice this.
    var base: Duration = .milliseconds(500)
    /// No wait is longer.
    var cap: Duration = .seconds(30)
    /// No wait is shorter (a retry at once would meet the same failure).
    var floor: Duration = .milliseconds(50)
    /// Failures in a row so far.
    private(set) var failures = 0

    /// The ceiling of the next wait after `failures` failures in a row.
    func ceiling(after failures: Int) -> Duration {
        let doubled = base * (1 << min(max(failures, 0), 16))
        return max(floor, min(cap, doubled))
    }

    /// Counts one more failure and returns how long to wait before the next try.
    mutating func next(using random: inout some RandomNumberGenerator) -> Duration {
        failures += 1
        let high = ceiling(after: failures).nanoseconds
        let low = floor.nanoseconds
        return .nanoseconds(high > low ? Int64.random(in: low...high, using: &random) : low)
    }

    /// A success: the next failure starts from the smallest window again.
    mutating func reset() { failures = 0 }
}
