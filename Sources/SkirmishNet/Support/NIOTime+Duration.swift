import NIOCore
import SkirmishWire

// The loops' time (`NIODeadline`, `TimeAmount`) meets seconds as a `Double` here and nowhere else; between
// `TimeAmount` and `Duration`, NIOCore's own `TimeAmount(_:)` and `Duration(_:)` convert.

extension TimeAmount {
    /// The span nearest `seconds` (rounded to the nanosecond).
    package init(seconds: Double) {
        self = .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// The span in seconds, as a `Double`.
    package var seconds: Double { Double(nanoseconds) / 1e9 }
}

extension NIODeadline {
    /// This instant in seconds on the monotonic clock, the time base of the value-type state machines that take
    /// seconds as a `Double` (the opponent, Ping's `sendTime`).
    package var seconds: Double { Double(uptimeNanoseconds) / 1e9 }
}

extension NIODeadline {
    /// The deadline at `instant`: both count nanoseconds of the system's monotonic clock.
    @inlinable
    package init(_ instant: Instant) {
        self = .uptimeNanoseconds(instant.nanoseconds)
    }
}

extension Instant {
    /// The instant of `deadline`, on the same monotonic clock.
    @inlinable
    package init(_ deadline: NIODeadline) {
        self.init(nanoseconds: deadline.uptimeNanoseconds)
    }

    /// Now, on the monotonic clock the loops read: for the runtime's shells, never for the state machines.
    @inlinable
    package static func now() -> Instant { Instant(NIODeadline.now()) }
}
