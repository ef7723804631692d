/// Packets per key over the last second, estimated in fixed memory: a count-min sketch with a sliding window.
///
/// A table of token buckets keyed by sender has to refuse or evict someone once it is full, and a flood of spoofed
/// sources fills it (70,000 one-byte datagrams locked out 14 of 16 new players). A count-min sketch (Cormode and
/// Muthukrishnan, 2005) keeps no key at all: each key adds one to one counter in each of ``depth`` rows, and its count
/// is the smallest of those counters. Counts are never under-estimated, so a flooder is always caught; they are
/// over-estimated by at most the traffic that shares all of a key's counters, which a flood of N sources spread over
/// ``width`` counters keeps near N / width — 70,000 sources over 32,768 counters add about 2 to an honest key, far
/// below any limit. Conservative update (only the smallest counters grow) keeps that error smaller still.
///
/// Counts live in two one-second windows; the rate is the current window's count plus the previous window's, weighted
/// by how much of it still lies within the last second (a sliding-window counter). Only admitted events are counted,
/// so a sender above its limit still gets its limit's worth through, as with a token bucket. Keys are hashed with a
/// secret chosen at start, so a sender cannot pick keys that collide with a victim's counters.
package struct RateSketch: Sendable {
    /// Rows of counters; each key has one counter per row.
    package static let depth = 4

    /// Counters per row, a power of two no larger than 2¹⁶ (each row takes 16 bits of one 64-bit hash).
    package let width: Int
    private var current: [UInt32]
    private var previous: [UInt32]
    private var windowStart: UInt64 = 0
    private let key0: UInt64
    private let key1: UInt64

    /// The window length, in nanoseconds.
    package static let window: UInt64 = 1_000_000_000

    /// A sketch of `width` counters per row; `key0` and `key1` are its hash secret.
    package init(width: Int, key0: UInt64, key1: UInt64) {
        precondition(width > 0 && width <= 1 << 16 && width & (width - 1) == 0, "width must be a power of two ≤ 65536")
        self.width = width
        // Two separate buffers: sharing one would copy it on the first packet.
        current = [UInt32](repeating: 0, count: Self.depth * width)
        previous = [UInt32](repeating: 0, count: Self.depth * width)
        self.key0 = key0
        self.key1 = key1
    }

    /// A sketch with a fresh random secret.
    package init(width: Int) {
        var generator = SystemRandomNumberGenerator()
        self.init(width: width, key0: generator.next(), key1: generator.next())
    }

    /// Bytes of counters the sketch holds, whatever the number of keys.
    package var memoryBytes: Int { 2 * Self.depth * width * MemoryLayout<UInt32>.size }

    /// The hash of a key of up to three words, under this sketch's secret.
    package func hash(_ a: UInt64, _ b: UInt64, _ c: UInt64) -> UInt64 {
        Self.mix(Self.mix(Self.mix(a ^ key0) ^ b ^ key1) ^ c)
    }

    /// The events counted for the key whose ``hash(_:_:_:)`` is `hash` over the second before `now` (nanoseconds).
    package mutating func estimate(_ hash: UInt64, now: UInt64) -> Double {
        advance(to: now)
        let mask = UInt64(width - 1)
        var smallest = UInt32.max
        var before = UInt32.max
        for row in 0..<Self.depth {
            let slot = row * width + Int(truncatingIfNeeded: (hash >> UInt64(16 * row)) & mask)
            smallest = min(smallest, current[slot])
            before = min(before, previous[slot])
        }
        let elapsed = Double(now &- windowStart) / Double(Self.window)
        return Double(smallest) + Double(before) * max(0, 1 - elapsed)
    }

    /// Counts one event for the key whose ``hash(_:_:_:)`` is `hash`, in the window ``estimate(_:now:)`` last
    /// advanced to. Conservative update: only the key's smallest counters grow.
    package mutating func record(_ hash: UInt64) {
        let mask = UInt64(width - 1)
        var smallest = UInt32.max
        for row in 0..<Self.depth {
            smallest = min(smallest, current[row * width + Int(truncatingIfNeeded: (hash >> UInt64(16 * row)) & mask)])
        }
        guard smallest < .max else { return }
        for row in 0..<Self.depth {
            let slot = row * width + Int(truncatingIfNeeded: (hash >> UInt64(16 * row)) & mask)
            if current[slot] <= smallest { current[slot] = smallest + 1 }
        }
    }

    /// Whether one more event for `hash` at `now` stays within `limit` over the last second; counts it if so.
    package mutating func admit(_ hash: UInt64, limit: Double, now: UInt64) -> Bool {
        guard estimate(hash, now: now) + 1 <= limit else { return false }
        record(hash)
        return true
    }

    /// Starts a new window when the current one is over; both are cleared after a silent second.
    private mutating func advance(to now: UInt64) {
        guard now &- windowStart >= Self.window else { return }
        if now &- windowStart >= 2 * Self.window {
            for index in previous.indices { previous[index] = 0 }
            windowStart = now
        } else {
            swap(&current, &previous)
            windowStart &+= Self.window
        }
        for index in current.indices { current[index] = 0 }
    }

    /// MurmurHash3's 64-bit finaliser: every input bit reaches every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B93F_E53E_C94F
        x ^= x >> 33
        return x
    }
}
