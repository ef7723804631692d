import SkirmishScript

/// The soak section of `summary.json`: health verdicts, resources at the start and the end, collector outages and
/// the samples they were judged on.
///
/// Written at every check while the run lasts (``state`` `running`), so a run killed without warning still leaves its
/// figures up to its last minute; the final write says `finished` or `interrupted`.
public struct SoakReport: Sendable, Hashable, Codable {
    /// Whether the run was still going when the report was written, or how it ended.
    public enum State: String, Sendable, Hashable, Codable {
        /// A checkpoint: the run was still going when this was written.
        case running
        case finished
        /// Stopped early by SIGINT or SIGTERM.
        case interrupted
    }

    /// Resident memory and descriptors at the first check, the first check after warm-up, the latest, and the peak.
    public struct Resources: Sendable, Hashable, Codable {
        /// Resident memory at the first check, in bytes.
        public var residentBytesStart: UInt64?
        /// Resident memory at the first check after warm-up, in bytes: the level growth is measured from.
        public var residentBytesAfterWarmUp: UInt64?
        /// Resident memory at the latest check, in bytes.
        public var residentBytesEnd: UInt64?
        /// The highest resident memory seen at any check, in bytes.
        public var residentBytesPeak: UInt64?
        /// Open file descriptors at the first check.
        public var openFilesStart: Int?
        /// Open file descriptors at the first check after warm-up.
        public var openFilesAfterWarmUp: Int?
        /// Open file descriptors at the latest check.
        public var openFilesEnd: Int?
        /// The most open file descriptors seen at any check.
        public var openFilesPeak: Int?
    }

    /// Running (a checkpoint), finished, or interrupted by a signal.
    public var state: State
    /// Seconds since the start of the run at the latest check.
    public var elapsedSeconds: Double
    /// Checks taken so far.
    public var checks: Int
    /// Seconds between checks.
    public var checkIntervalSeconds: Double
    /// The limits the checks were judged against.
    public var policy: HealthPolicy
    /// The latest verdict of every health check.
    public var verdicts: [HealthVerdict]
    /// Memory and descriptors at the start, after warm-up, at the end, and their peaks.
    public var resources: Resources
    /// Every collector outage seen, oldest first.
    public var outages: [CollectorOutage]
    /// The samples kept (bounded; thinned evenly on long runs).
    public var samples: [HealthSample]
    /// No check failed.
    public var passed: Bool

    /// The report of `monitor` after `checks` checks.
    package init(monitor: HealthMonitor, state: State, checks: Int, checkIntervalSeconds: Double) {
        self.state = state
        elapsedSeconds = monitor.latest?.seconds ?? 0
        self.checks = checks
        self.checkIntervalSeconds = checkIntervalSeconds
        policy = monitor.policy
        verdicts = monitor.verdicts
        let afterWarmUp = monitor.samples.first { $0.seconds >= monitor.policy.warmUp }
        resources = Resources(
            residentBytesStart: monitor.first?.residentBytes, residentBytesAfterWarmUp: afterWarmUp?.residentBytes,
            residentBytesEnd: monitor.latest?.residentBytes, residentBytesPeak: monitor.peakResidentBytes,
            openFilesStart: monitor.first?.openFiles, openFilesAfterWarmUp: afterWarmUp?.openFiles,
            openFilesEnd: monitor.latest?.openFiles, openFilesPeak: monitor.peakOpenFiles)
        outages = monitor.outages
        samples = monitor.samples
        passed = monitor.passed
    }

    /// One line per check for the end-of-run table: `PASS  memory  RSS 41.0 MiB → …`.
    public func lines() -> [String] {
        verdicts.map { verdict in
            let label =
                switch verdict.status {
                case .pass: "PASS"
                case .fail: "FAIL"
                case .warn: "WARN"
                case .pending: "----"
                }
            return "\(label)  \(verdict.check.rawValue): \(verdict.detail)"
        }
    }
}
