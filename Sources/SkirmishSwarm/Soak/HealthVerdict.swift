/// One health check's judgement at one moment of a soak.
public struct HealthVerdict: Sendable, Hashable, Codable {
    /// Which invariant.
    public enum Check: String, Sendable, Hashable, Codable, CaseIterable {
        /// Resident memory flat after warm-up.
        case memory
        /// Open file descriptors flat after warm-up.
        case openFiles = "open_files"
        /// Desync episodes per completed match within the allowance.
        case desyncs
        /// Errors per handshake attempt within the budget.
        case errorBudget = "error_budget"
        /// Tick lateness p99 within its budget in nearly every interval.
        case tickLateness = "tick_lateness"
        /// The collector took the pushes (an outage is reported, never fatal: the run's own files hold everything).
        case collector
    }

    /// How a check came out.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Not enough data yet (still warming up, or too few samples).
        case pending
        case pass
        /// Something to know that does not fail the run (a collector outage).
        case warn
        case fail
    }

    /// Which health invariant this is.
    public var check: Check
    /// Pending, pass, warn or fail.
    public var status: Status
    /// The figure judged, in the check's unit (bytes, descriptors, a rate, a share of intervals).
    public var observed: Double?
    /// The most ``observed`` may be.
    public var limit: Double?
    /// What was seen, for people: `RSS 41.0 MiB → 41.6 MiB after warm-up, +0.9 MiB/h (limit +32 MiB)`.
    public var detail: String

    /// A verdict; `observed` and `limit` are `nil` for checks without a single figure.
    public init(check: Check, status: Status, observed: Double? = nil, limit: Double? = nil, detail: String) {
        self.check = check
        self.status = status
        self.observed = observed
        self.limit = limit
        self.detail = detail
    }
}
