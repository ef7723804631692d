/// A point in time on a monotonic clock, in nanoseconds since an arbitrary origin: the one time type of every state
/// machine in Skirmish (protocol plug-ins, agents, game rules, the opponent).
///
/// Machines never read a clock: every entry point takes `now: Instant`, so a test can play hours of traffic, drops
/// and timeouts in microseconds and a replay with the same seed gives the same result. The runtime's loops pass the
/// system's monotonic clock (the one `NIODeadline` reads); what the origin is does not matter, only differences do.
///
/// Spans are the standard library's `Duration`. A 64-bit count of nanoseconds, compared and added without the
/// 128-bit arithmetic of `Duration`, is what a loop that handles a million packets a second wants on its hot path.
public struct Instant: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: UInt64

    /// The instant `nanoseconds` after the clock's origin.
    @inlinable
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The clock's origin: earlier than any instant a loop reads, useful as "long ago" and in tests.
    public static let zero = Instant(nanoseconds: 0)

    /// Later than any real instant: a deadline that never comes.
    public static let distantFuture = Instant(nanoseconds: .max)

    /// The instant nearest `seconds` after the origin (negative values give the origin).
    public init(seconds: Double) {
        nanoseconds = seconds <= 0 ? 0 : seconds >= 1.8e10 ? .max : UInt64((seconds * 1e9).rounded())
    }

    /// Seconds since the origin, for clocks that travel in packets (a Ping's send time) and time-based arithmetic.
    @inlinable
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Whether `lhs` comes before `rhs`.
    @inlinable
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The instant `nanoseconds` later (earlier when negative), saturating at the origin and at ``distantFuture``.
    @inlinable
    public func advanced(byNanoseconds delta: Int64) -> Instant {
        if delta >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(delta))
            return Instant(nanoseconds: overflow ? .max : sum)
        }
        let magnitude = delta.magnitude
        return Instant(nanoseconds: nanoseconds > magnitude ? nanoseconds - magnitude : 0)
    }

    /// Nanoseconds from `earlier` to this instant (negative when `earlier` is later), saturating at `Int64`'s range.
    @inlinable
    public func nanoseconds(since earlier: Instant) -> Int64 {
        if nanoseconds >= earlier.nanoseconds {
            let difference = nanoseconds - earlier.nanoseconds
            return difference > UInt64(Int64.max) ? .max : Int64(difference)
        }
        let difference = earlier.nanoseconds - nanoseconds
        return difference > UInt64(Int64.max) ? .min : -Int64(difference)
    }

    /// The instant `duration` later, saturating at ``distantFuture``.
    public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(byNanoseconds: rhs.nanoseconds) }

    /// The instant `duration` earlier, saturating at the origin.
    public static func - (lhs: Instant, rhs: Duration) -> Instant {
        lhs.advanced(byNanoseconds: rhs.nanoseconds == .min ? .max : -rhs.nanoseconds)
    }

    /// Moves the instant `duration` later.
    public static func += (lhs: inout Instant, rhs: Duration) { lhs = lhs + rhs }

    /// The span from `rhs` to `lhs` (negative when `rhs` is later).
    public static func - (lhs: Instant, rhs: Instant) -> Duration { .nanoseconds(lhs.nanoseconds(since: rhs)) }

    /// `12.345678901s` after the origin, or `distant future`.
    public var description: String {
        guard self != .distantFuture else { return "distant future" }
        let fraction = String(nanoseconds % 1_000_000_000)
        return "\(nanoseconds / 1_000_000_000).\(String(repeating: "0", count: 9 - fraction.count))\(fraction)s"
    }
}
