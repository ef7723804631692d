import SkirmishScript

/// What a soak reads once per check: the process's resources and the run's cumulative figures.
///
/// Counters are cumulative since the start of the run (legitimate personas only), so a check can judge a rate over
/// the whole run and a missed check loses nothing.
public struct HealthSample: Sendable, Hashable, Codable {
    /// Seconds since the run started.
    public var seconds: Double
    /// Resident memory of the process (`VmRSS`), bytes; `nil` where `/proc` cannot be read.
    public var residentBytes: UInt64?
    /// Open file descriptors of the process (entries of `/proc/self/fd`); `nil` where it cannot be read.
    public var openFiles: Int?
    /// Bots alive in this process.
    public var bots: Int
    /// Matches completed so far.
    public var matchesCompleted: UInt64
    /// Desync episodes so far.
    public var desyncs: UInt64
    /// Errors of every kind so far.
    public var errors: UInt64
    /// Handshakes attempted so far (succeeded plus failed): the denominator of the error budget.
    public var handshakes: UInt64
    /// The 99th percentile of tick lateness over the interval since the previous sample, seconds (`nil`: no input).
    public var tickLatenessP99: Double?
    /// Pushes collectors accepted so far (`nil` without `--push`).
    public var exporterPushes: UInt64?
    /// Push attempts that failed so far (`nil` without `--push`).
    public var exporterFailures: UInt64?

    /// A sample; every figure but the time defaults to zero or unknown.
    public init(
        seconds: Double, residentBytes: UInt64? = nil, openFiles: Int? = nil, bots: Int = 0,
        matchesCompleted: UInt64 = 0, desyncs: UInt64 = 0, errors: UInt64 = 0, handshakes: UInt64 = 0,
        tickLatenessP99: Double? = nil, exporterPushes: UInt64? = nil, exporterFailures: UInt64? = nil
    ) {
        self.seconds = seconds
        self.residentBytes = residentBytes
        self.openFiles = openFiles
        self.bots = bots
        self.matchesCompleted = matchesCompleted
        self.desyncs = desyncs
        self.errors = errors
        self.handshakes = handshakes
        self.tickLatenessP99 = tickLatenessP99
        self.exporterPushes = exporterPushes
        self.exporterFailures = exporterFailures
    }
}
