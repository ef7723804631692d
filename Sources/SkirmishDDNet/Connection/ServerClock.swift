import SkirmishWire

/// The server's tick clock as one bot sees it, from snapshot arrivals: which tick the server is on now, and how old a
/// snapshot was when it arrived.
///
/// The server starts tick `T` at `origin + T × 20 ms` on its own clock (`SERVER_TICK_SPEED`) and sends the
/// snapshot right after. `arrival − T × 20 ms` is therefore `origin` plus that snapshot's delay; its minimum is the
/// origin plus the least delay, and half the least round trip estimates that delay (DESIGN §4: "server clock
/// estimated from pings"). The minimum is kept over two alternating 10-second windows, so a drifting clock or a
/// route change is followed within 20 s.
struct ServerClock {
    /// Nanoseconds per server tick.
    static let tick: Int64 = 1_000_000_000 / Int64(Wire.tickRate)
    private static let window: Int64 = 10_000_000_000

    private var current = Int64.max
    private var previous = Int64.max
    private var windowEnd: UInt64 = 0

    /// The least `arrival − tick × 20 ms` seen lately, in nanoseconds; `nil` before any snapshot.
    var offset: Int64? {
        let least = min(current, previous)
        return least == .max ? nil : least
    }

    /// Notes that the snapshot of `tick` arrived at `arrival`.
    mutating func observe(tick: Int32, arrival: Instant) {
        if arrival.nanoseconds >= windowEnd {
            previous = current
            current = .max
            windowEnd = arrival.nanoseconds &+ UInt64(Self.window)
        }
        current = min(current, Int64(bitPattern: arrival.nanoseconds) &- Int64(tick) &* Self.tick)
    }

    /// How old the snapshot of `tick` was on arrival: its delay beyond the least one, plus half the least round trip.
    func age(tick: Int32, arrival: Instant, leastRoundTrip: Duration?) -> Duration? {
        guard let offset else { return nil }
        let delay = Int64(bitPattern: arrival.nanoseconds) &- Int64(tick) &* Self.tick &- offset
        let half = (leastRoundTrip?.wholeNanoseconds ?? 0) / 2
        return .nanoseconds(delay + half)
    }

    /// The tick the server is on at `now`, as far as the snapshots tell.
    func estimatedTick(at now: Instant) -> Int32? {
        guard let offset else { return nil }
        let elapsed = Int64(bitPattern: now.nanoseconds) &- offset
        return Int32(clamping: elapsed / Self.tick)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64`'s range (SkirmishWire's own is not public API).
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
