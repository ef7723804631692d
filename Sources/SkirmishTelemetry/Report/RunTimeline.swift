/// Points over a run for the HTML report: bots, packet rate, RTT, snapshot age and tick lateness percentiles,
/// desyncs and errors.
///
/// Fed with the same merged snapshots the exporter pushes. Rates and percentiles are per interval (the
/// difference between two snapshots), so a late spike shows instead of drowning in the run's history. Times count
/// from the run's start when it is given (otherwise from the first snapshot), and a snapshot less than
/// ``shortestIntervalMs`` after a point at least that wide (the final one, taken just after the last sample) widens the last
/// point instead of adding a point whose rate over a few milliseconds would spike. The timeline is bounded: past
/// ``capacity`` points every other point is dropped, so a soak run keeps its shape in constant memory.
public struct RunTimeline: Sendable, Codable, Equatable {
    /// One moment of the run.
    public struct Point: Sendable, Codable, Equatable {
        /// Seconds since the run's start (the first snapshot, in timelines given no start).
        public var t: Double
        /// Bots connected.
        public var bots: Double
        /// Packets sent plus received per second over the interval before `t`.
        public var packetsPerSecond: Double
        /// Round-trip time percentiles over the interval, in seconds (`nil` when no ping completed).
        public var rttP50: Double?
        /// 95th percentile RTT over the interval.
        public var rttP95: Double?
        /// 99th percentile RTT over the interval.
        public var rttP99: Double?
        /// Desync episodes so far.
        public var desyncs: UInt64
        /// Errors so far.
        public var errors: UInt64
        /// 99th percentile snapshot age over the interval, in seconds (`nil` when no snapshot arrived).
        public var snapshotAgeP99: Double?
        /// 99th percentile tick lateness of bot inputs over the interval, in seconds (`nil` when none was sent).
        public var tickLatenessP99: Double?

        /// A point; the snapshot age and lateness may be left out (timelines written before they were kept).
        public init(
            t: Double, bots: Double, packetsPerSecond: Double, rttP50: Double?, rttP95: Double?, rttP99: Double?,
            desyncs: UInt64, errors: UInt64, snapshotAgeP99: Double? = nil, tickLatenessP99: Double? = nil
        ) {
            self.t = t
            self.bots = bots
            self.packetsPerSecond = packetsPerSecond
            self.rttP50 = rttP50
            self.rttP95 = rttP95
            self.rttP99 = rttP99
            self.desyncs = desyncs
            self.errors = errors
            self.snapshotAgeP99 = snapshotAgeP99
            self.tickLatenessP99 = tickLatenessP99
        }
    }

    /// The most points kept.
    public let capacity: Int
    /// The points, oldest first.
    public internal(set) var points: [Point] = []

    /// The shortest interval a point covers; a later snapshot closer than this widens the last point.
    public static let shortestIntervalMs: Int64 = 500

    /// The cumulative figures a point's interval starts from.
    private struct Base: Sendable {
        var ms: Int64
        var packets: UInt64 = 0
        var rtt: HistogramValue?
        var age: HistogramValue?
        var lateness: HistogramValue?
    }

    private var startMs: Int64?
    /// Where the next point's interval starts (the latest snapshot's figures).
    private var previous: Base?
    /// Where the last point's interval started, to widen it.
    private var lastBase: Base?

    private enum CodingKeys: String, CodingKey {
        case capacity, points
    }

    /// Timelines are equal when their points are (the bookkeeping for the next point is not compared).
    public static func == (lhs: RunTimeline, rhs: RunTimeline) -> Bool {
        lhs.capacity == rhs.capacity && lhs.points == rhs.points
    }

    /// An empty timeline keeping at most `capacity` points (at least 2); `startMs`, the run's start on the
    /// snapshots' clock, is where its time axis and its first interval begin (default: the first snapshot).
    public init(capacity: Int = 1_000, startMs: Int64? = nil) {
        self.capacity = max(2, capacity)
        self.startMs = startMs
        previous = startMs.map { Base(ms: $0) }
    }

    /// Adds a point from a merged snapshot; snapshots must come in time order.
    public mutating func record(_ snapshot: MetricsSnapshot) {
        let start = startMs ?? snapshot.timestampMs
        startMs = start
        // Only a point at least as wide as the shortest interval absorbs a short tail: a caller recording faster
        // than that gets a point per snapshot, never one point widening over the whole run.
        if let previous, let lastBase, !points.isEmpty,
            snapshot.timestampMs - previous.ms < Self.shortestIntervalMs,
            previous.ms - lastBase.ms >= Self.shortestIntervalMs
        {
            // Too short to be a point of its own: the last point now covers up to this snapshot.
            points.removeLast()
            self.previous = lastBase
        }
        let base = previous
        let packets =
            snapshot.counterTotal(SkirmishMetrics.packetsSent) &+ snapshot.counterTotal(SkirmishMetrics.packetsReceived)
        let elapsed = Double(snapshot.timestampMs - (base?.ms ?? snapshot.timestampMs)) / 1_000
        let rate = base == nil || elapsed <= 0 ? 0 : Double(packets &- min(base?.packets ?? 0, packets)) / elapsed
        let rtt = snapshot.histogram(SkirmishMetrics.rtt)
        let interval = rtt.map { current in base?.rtt.map { current.subtracting($0) } ?? current }
        let age = snapshot.histogram(SkirmishMetrics.snapshotAge)
        let lateness = snapshot.histogram(SkirmishMetrics.tickLateness)
        let ageInterval = age.map { current in base?.age.map { current.subtracting($0) } ?? current }
        let latenessInterval = lateness.map { current in base?.lateness.map { current.subtracting($0) } ?? current }
        points.append(
            Point(
                t: Double(snapshot.timestampMs - start) / 1_000,
                bots: snapshot.gaugeTotal(SkirmishMetrics.botsConnected),
                packetsPerSecond: rate,
                rttP50: interval?.quantile(0.50),
                rttP95: interval?.quantile(0.95),
                rttP99: interval?.quantile(0.99),
                desyncs: snapshot.counterTotal(SkirmishMetrics.desyncs),
                errors: snapshot.counterTotal(SkirmishMetrics.errors),
                snapshotAgeP99: ageInterval?.quantile(0.99),
                tickLatenessP99: latenessInterval?.quantile(0.99)
            ))
        lastBase = base
        previous = Base(ms: snapshot.timestampMs, packets: packets, rtt: rtt, age: age, lateness: lateness)
        if points.count > capacity {
            // Keep the first and the latest point; drop every other one in between.
            points = points.enumerated().filter { $0.offset % 2 == 0 || $0.offset == points.count - 1 }.map(\.element)
        }
    }

    /// This timeline without the points a run of `seconds` cannot have (a `t` not finite, below 0 or past it): what
    /// a merge reads from a file it did not write.
    public func within(seconds: Double) -> RunTimeline {
        var kept = self
        kept.points = points.filter { $0.t.isFinite && $0.t >= 0 && $0.t <= seconds }
        return kept
    }

    /// The timeline of a run whose shards each kept their own: one point a second of the run, each shard's latest
    /// point at or before that second added in (a shard that has ended adds its counts and no bots).
    ///
    /// Bots, packet rates, desyncs and errors add up exactly. The percentiles cannot: a shard's point keeps its
    /// interval's percentiles, not the interval's distribution, so a merged point shows the highest of the shards'
    /// (an upper bound of the run's, and exactly it when one shard is slowest). The run's whole-run percentiles come
    /// from its merged histograms instead. Shards' clocks start within a moment of each other; each counts from its
    /// own start.
    public static func merging(_ timelines: [RunTimeline]) -> RunTimeline {
        var merged = RunTimeline(capacity: timelines.map(\.capacity).max() ?? 1_000)
        // A point no run has (a time not finite, negative or past a year) is left out rather than walked to.
        let timelines = timelines.map { $0.within(seconds: 365 * 86_400) }
        let ends = timelines.map { $0.points.last.map { Int($0.t.rounded()) } ?? -1 }
        guard let end = ends.max(), end >= 0 else { return merged }
        var next = [Int](repeating: 0, count: timelines.count)
        var latest = [Point?](repeating: nil, count: timelines.count)
        for second in 0...end {
            var point = Point(
                t: Double(second), bots: 0, packetsPerSecond: 0, rttP50: nil, rttP95: nil, rttP99: nil, desyncs: 0,
                errors: 0)
            var present = false
            for (shard, timeline) in timelines.enumerated() {
                while next[shard] < timeline.points.count, timeline.points[next[shard]].t < Double(second) + 0.5 {
                    latest[shard] = timeline.points[next[shard]]
                    next[shard] += 1
                }
                guard let last = latest[shard] else { continue }
                present = true
                point.desyncs &+= last.desyncs
                point.errors &+= last.errors
                // A shard past its last point has ended: its counts stay, its bots and traffic are gone.
                guard second <= ends[shard] else { continue }
                point.bots += last.bots
                point.packetsPerSecond += last.packetsPerSecond
                point.rttP50 = highest(point.rttP50, last.rttP50)
                point.rttP95 = highest(point.rttP95, last.rttP95)
                point.rttP99 = highest(point.rttP99, last.rttP99)
                point.snapshotAgeP99 = highest(point.snapshotAgeP99, last.snapshotAgeP99)
                point.tickLatenessP99 = highest(point.tickLatenessP99, last.tickLatenessP99)
            }
            guard present else { continue }
            merged.points.append(point)
        }
        if merged.points.count > merged.capacity {
            let stride = (merged.points.count + merged.capacity - 1) / merged.capacity
            merged.points = merged.points.enumerated()
                .filter { $0.offset % stride == 0 || $0.offset == merged.points.count - 1 }.map(\.element)
        }
        return merged
    }

    private static func highest(_ a: Double?, _ b: Double?) -> Double? {
        guard let a else { return b }
        guard let b else { return a }
        return max(a, b)
    }
}
