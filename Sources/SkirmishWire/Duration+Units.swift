/// The one place a `Duration` becomes a count of nanoseconds or seconds, for every module of the package.
///
/// Each layer keeps one time type: configuration, scripts and public API speak `Duration`; the loops speak
/// `NIODeadline`/`TimeAmount`; the state machines take `Instant` and `Duration`, and those that do arithmetic on
/// time (the opponent, the judges) do it in seconds as a `Double` inside. Conversions go through these members, NIOCore's `TimeAmount(_:)` and `Duration(_:)`, and
/// SkirmishNet's `NIODeadline.seconds` and `TimeAmount(seconds:)`, never through hand-written `components`
/// arithmetic.
extension Duration {
    /// The whole duration in nanoseconds (truncated towards zero below a nanosecond).
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The duration in seconds, as a `Double`, from whole nanoseconds: `.milliseconds(120)` gives exactly the
    /// `Double` nearest 0.12, as a script's `120ms` does.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds / 1_000_000_000) / 1e9
    }

    /// The duration nearest `seconds` (rounded to the nanosecond).
    package init(seconds: Double) {
        self = .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
