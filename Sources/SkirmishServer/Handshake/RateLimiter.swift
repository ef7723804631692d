/// Token buckets per sender, in a table that never grows past its limit.
///
/// Each key (a sender's address) may send `rate` packets per second on average and `burst` at once. The table holds at
/// most `capacity` senders: when it is full, senders idle for longer than `idleTimeout` are swept out; if none are, a
/// new sender is refused (and counted by the caller) rather than letting a spoofed-address flood grow memory.
package struct RateLimiter<Key: Hashable & Sendable>: Sendable {
    package struct Configuration: Sendable, Hashable {
        /// Sustained packets per second per sender.
        package var rate: Double
        /// Packets a sender may send at once.
        package var burst: Double
        /// Most senders tracked at once.
        package var capacity: Int
        /// A sender silent this long (nanoseconds) may be forgotten.
        package var idleTimeout: UInt64

        package init(rate: Double, burst: Double, capacity: Int, idleTimeout: UInt64 = 10_000_000_000) {
            self.rate = rate
            self.burst = burst
            self.capacity = capacity
            self.idleTimeout = idleTimeout
        }
    }

    /// Why a packet was refused.
    package enum Verdict: Sendable, Hashable {
        case allowed
        /// The sender exceeded its rate.
        case limited
        /// The table is full of active senders; this new one cannot be tracked.
        case tableFull
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: UInt64
    }

    package let configuration: Configuration
    private var buckets: [Key: Bucket] = [:]
    private var lastSweep: UInt64 = 0

    package init(_ configuration: Configuration) {
        self.configuration = configuration
        buckets.reserveCapacity(min(configuration.capacity, 4_096))
    }

    /// Senders currently tracked.
    package var count: Int { buckets.count }

    /// Takes one token from `key`'s bucket at `now` (nanoseconds).
    package mutating func admit(_ key: Key, now: UInt64) -> Verdict {
        // One hash of the key per packet: the bucket is found once and updated in place.
        if let index = buckets.index(forKey: key) {
            let bucket = buckets.values[index]
            let elapsed = Double(now &- bucket.updated) / 1e9
            var tokens = min(configuration.burst, bucket.tokens + elapsed * configuration.rate)
            let verdict: Verdict = tokens >= 1 ? .allowed : .limited
            if verdict == .allowed { tokens -= 1 }
            buckets.values[index] = Bucket(tokens: tokens, updated: now)
            return verdict
        }
        if buckets.count >= configuration.capacity {
            sweep(now: now)
            guard buckets.count < configuration.capacity else { return .tableFull }
        }
        buckets[key] = Bucket(tokens: configuration.burst - 1, updated: now)
        return .allowed
    }

    /// Forgets senders idle for longer than the timeout; at most once per second of `now`.
    /// Stops tracking `key` (its connection closed).
    package mutating func forget(_ key: Key) { buckets[key] = nil }

    package mutating func sweep(now: UInt64) {
        guard now &- lastSweep >= 1_000_000_000 || lastSweep == 0 else { return }
        lastSweep = now
        let timeout = configuration.idleTimeout
        buckets = buckets.filter { now &- $0.value.updated < timeout }
    }
}
