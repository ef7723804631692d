/// A stretch of a soak during which no collector accepted a push while pushes kept failing.
public struct CollectorOutage: Sendable, Hashable, Codable {
    /// Seconds since the start of the run at the last check before the outage was seen.
    public var from: Double
    /// Seconds since the start at the check that saw a push land again, or the latest check while it goes on.
    public var to: Double
    /// Failed attempts during the outage.
    public var failures: UInt64
    /// Whether it still lasted at the latest check.
    public var ongoing: Bool

    /// An outage from `from` to `to` seconds into the run, with its failed pushes.
    public init(from: Double, to: Double, failures: UInt64, ongoing: Bool) {
        self.from = from
        self.to = to
        self.failures = failures
        self.ongoing = ongoing
    }
}
