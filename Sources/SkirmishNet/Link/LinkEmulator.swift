import NIOCore
import SkirmishWire

/// Decides, packet by packet and from a seeded generator, what a ``LinkProfile`` does to it: drop it, or deliver it
/// once or twice after which delays.
///
/// Pure: the session schedules the deliveries it returns on its event loop.
@usableFromInline
package struct LinkEmulator: Sendable {
    package let profile: LinkProfile
    private var random: SeededRandom
    /// The profile's latency and jitter in nanoseconds, converted once: `Duration`'s are 128-bit, read per packet.
    private let latency: Int64
    private let jitter: Int64

    package init(profile: LinkProfile, seed: UInt64) {
        self.profile = profile
        random = SeededRandom(seed: seed)
        latency = profile.latency.nanoseconds
        jitter = profile.jitter.nanoseconds
    }

    /// The delays after which this packet arrives: empty when lost, two entries when duplicated.
    package mutating func fate() -> (first: TimeAmount?, second: TimeAmount?) {
        if profile.loss > 0, Double.random(in: 0..<1, using: &random) < profile.loss { return (nil, nil) }
        let first = delay()
        let second: TimeAmount? =
            profile.duplicate > 0 && Double.random(in: 0..<1, using: &random) < profile.duplicate ? delay() : nil
        return (first, second)
    }

    /// One delay drawn from the profile (latency ± jitter, held back when reordered).
    package mutating func delay() -> TimeAmount {
        var nanos = latency
        let spread = jitter
        if spread > 0 { nanos += Int64.random(in: -spread...spread, using: &random) }
        if profile.reorder > 0, Double.random(in: 0..<1, using: &random) < profile.reorder {
            // Held back by up to one more latency (at least 5 ms), so packets sent after it arrive first.
            nanos +=
                max(latency, 5_000_000) / 2 + Int64.random(in: 0...max(latency, 5_000_000) / 2, using: &random)
        }
        return .nanoseconds(max(nanos, 0))
    }
}
