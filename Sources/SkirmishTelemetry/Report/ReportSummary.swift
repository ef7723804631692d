/// What the HTML report shows besides the charts: headline figures, threshold verdicts, the run's settings and
/// totals, and tables (per persona, per game, latencies, errors, exporter, server).
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

    /// A titled table: a header row and rows of already formatted cells.
    public struct Table: Sendable, Codable, Equatable {
        /// The heading above it.
        public var title: String
        /// Column headings.
        public var columns: [String]
        /// Rows, each with one cell per column.
        public var rows: [[String]]
        /// Takes the page's full width (many columns) instead of half of it.
        public var wide: Bool
        /// Shown instead of an empty table, saying why there is nothing (`no errors`).
        public var empty: String

        /// Whether the page gives it the full width: asked for, or six columns and more, which do not fit the
        /// 400 px of a column without running into the next one.
        public var fillsWidth: Bool { wide || columns.count >= 6 }

        /// A table; `empty` is what the page says when `rows` is empty.
        public init(_ title: String, columns: [String], rows: [[String]], wide: Bool = false, empty: String = "none") {
            self.title = title
            self.columns = columns
            self.rows = rows
            self.wide = wide
            self.empty = empty
        }
    }

    /// A chart beyond the timeline's: one line per series, over time or over percentiles.
    public struct Chart: Sendable, Codable, Equatable {
        /// What the horizontal axis counts.
        public enum Axis: String, Sendable, Codable, Equatable {
            /// Seconds since the run's start.
            case time
            /// Percentiles, spread as HDR histograms are plotted: 90 %, 99 %, 99.9 % … equally apart, so the tail
            /// is as wide as the body (`x` holds the number of nines, −log₁₀(1 − q)).
            case percentile
        }

        /// One line.
        public struct Series: Sendable, Codable, Equatable {
            /// Its legend.
            public var name: String
            /// Its points, in `x` order; a `nil` `y` breaks the line.
            public var points: [Point]

            /// A line named `name`.
            public init(_ name: String, points: [Point]) {
                self.name = name
                self.points = points
            }
        }

        /// One point of a line.
        public struct Point: Sendable, Codable, Equatable {
            /// Along the axis: seconds, or nines for percentiles.
            public var x: Double
            /// The value in the chart's unit; `nil` for no data.
            public var y: Double?

            /// A point.
            public init(x: Double, y: Double?) {
                self.x = x
                self.y = y
            }
        }

        /// The heading inside the chart.
        public var title: String
        /// The unit of the values (`ms`).
        public var unit: String
        /// What the horizontal axis counts.
        public var axis: Axis
        /// The lines.
        public var series: [Series]

        /// A chart.
        public init(_ title: String, unit: String, axis: Axis, series: [Series]) {
            self.title = title
            self.unit = unit
            self.axis = axis
            self.series = series
        }
    }

    /// The few figures shown large at the top (peak bots, RTT p99, desyncs, …), in display order.
    public var headline: [Entry]
    /// The run's settings (script, target, bots, duration, seed, …), in display order.
    public var settings: [Entry]
    /// End-of-run totals (packets, desyncs, exporter line, …), in display order.
    public var totals: [Entry]
    /// The threshold verdicts.
    public var verdicts: [Verdict]
    /// Tables after the charts, in display order.
    public var tables: [Table]
    /// The figures nobody in the run measured, by their summary names (`rtt`, `snapshot_age`, `tick_lateness`,
    /// `desyncs`, …): their charts are left out and named once as not measured, instead of drawn as flat zeros.
    public var notMeasured: [String]
    /// Charts after the timeline's (latency distributions, percentiles over time per persona).
    public var charts: [Chart]
    /// The baseline run's figures drawn as dashed lines on the charts over time (`--baseline`), by key:
    /// `packets_per_second`, `rtt_p99`, `snapshot_age_p99`, `tick_lateness_p99` (seconds for latencies).
    public var baseline: Baseline?

    /// A baseline run's whole-run figures, for reference lines.
    public struct Baseline: Sendable, Codable, Equatable {
        /// The baseline run's id.
        public var run: String
        /// Its figures by key (see ``ReportSummary/baseline``).
        public var figures: [String: Double]

        /// A baseline.
        public init(run: String, figures: [String: Double]) {
            self.run = run
            self.figures = figures
        }
    }

    /// A summary; every part may be empty.
    public init(
        headline: [Entry] = [], settings: [Entry] = [], totals: [Entry] = [], verdicts: [Verdict] = [],
        tables: [Table] = [], notMeasured: [String] = [], charts: [Chart] = [], baseline: Baseline? = nil
    ) {
        self.charts = charts
        self.baseline = baseline
        self.headline = headline
        self.settings = settings
        self.totals = totals
        self.verdicts = verdicts
        self.tables = tables
        self.notMeasured = notMeasured
    }

    private enum CodingKeys: String, CodingKey {
        case headline, settings, totals, verdicts, tables, notMeasured, charts, baseline
    }

    /// Decodes a summary; the headline, tables and figures not measured may be missing (summaries written before
    /// they existed).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        headline = try container.decodeIfPresent([Entry].self, forKey: .headline) ?? []
        settings = try container.decode([Entry].self, forKey: .settings)
        totals = try container.decode([Entry].self, forKey: .totals)
        verdicts = try container.decode([Verdict].self, forKey: .verdicts)
        tables = try container.decodeIfPresent([Table].self, forKey: .tables) ?? []
        notMeasured = try container.decodeIfPresent([String].self, forKey: .notMeasured) ?? []
        charts = try container.decodeIfPresent([Chart].self, forKey: .charts) ?? []
        baseline = try container.decodeIfPresent(Baseline.self, forKey: .baseline)
    }

    /// Whether every threshold held (true when there are none).
    public var passed: Bool { verdicts.allSatisfy(\.passed) }
}
