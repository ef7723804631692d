/// What the HTML report shows besides the charts: the run's settings, totals and threshold verdicts.
///
/// `Codable` so the swarm can keep it in `summary.json` and `skirmish report summary.json` can rebuild the page.
public struct ReportSummary: Sendable, Codable, Equatable {
    /// A named value, shown as one table row.
    public struct Entry: Sendable, Codable, Equatable {
        /// The row's label.
        public var name: String
        /// The row's value, already formatted.
        public var value: String

        /// An entry.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// One threshold of the script and whether the run met it.
    public struct Verdict: Sendable, Codable, Equatable {
        /// The threshold's metric (`rtt_p99`).
        public var name: String
        /// The condition as written in the script (`< 120ms`).
        public var expectation: String
        /// What the run measured, formatted.
        public var observed: String
        /// Whether the condition held.
        public var passed: Bool

        /// A verdict.
        public init(name: String, expectation: String, observed: String, passed: Bool) {
            self.name = name
            self.expectation = expectation
            self.observed = observed
            self.passed = passed
        }
    }

    /// The run's settings (script, target, bots, duration, seed, …), in display order.
    public var settings: [Entry]
    /// End-of-run totals (packets, desyncs, exporter line, …), in display order.
    public var totals: [Entry]
    /// The threshold verdicts.
    public var verdicts: [Verdict]

    /// A summary; every part may be empty.
    public init(settings: [Entry] = [], totals: [Entry] = [], verdicts: [Verdict] = []) {
        self.settings = settings
        self.totals = totals
        self.verdicts = verdicts
    }

    /// Whether every threshold held (true when there are none).
    public var passed: Bool { verdicts.allSatisfy(\.passed) }
}
