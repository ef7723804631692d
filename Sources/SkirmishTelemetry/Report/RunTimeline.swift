/// A run's figures over time, one point per sample, for the report's charts. Bounded: past ``capacity`` points it
/// keeps every other one, so an hours-long soak still fits in a small report.
public struct RunTimeline: Sendable, Codable {
    public struct Point: Sendable, Codable, Hashable {
        public var seconds: Double
        public var bots: Int
        public var packetsSent: UInt64
        public var packetsReceived: UInt64
        public var matchesCompleted: UInt64
        public var desyncs: UInt64
        public var errors: UInt64
        public var rttP50: Double?
        public var rttP95: Double?
        public var rttP99: Double?
    }

    public private(set) var points: [Point] = []
    public let capacity: Int

    public init(capacity: Int = 2_000) {
        self.capacity = capacity
    }

    /// Adds the figures of `snapshot`, taken `elapsed` seconds into the run with `bots` alive.
    public mutating func append(_ snapshot: MetricsSnapshot, elapsed: Double, bots: Int) {
        let rtt = snapshot.distribution(SkirmishMetrics.rtt)
        points.append(
            Point(
                seconds: elapsed, bots: bots, packetsSent: snapshot.counterTotal(SkirmishMetrics.packetsSent),
                packetsReceived: snapshot.counterTotal(SkirmishMetrics.packetsReceived),
                matchesCompleted: snapshot.counterTotal(SkirmishMetrics.matchesCompleted),
                desyncs: snapshot.counterTotal(SkirmishMetrics.desyncs),
                errors: snapshot.counterTotal(SkirmishMetrics.errors), rttP50: rtt?.quantile(0.5),
                rttP95: rtt?.quantile(0.95), rttP99: rtt?.quantile(0.99)))
        if points.count > capacity {
            points = points.enumerated().filter { $0.offset % 2 == 0 || $0.offset == points.count - 1 }.map(\.element)
        }
    }
}
