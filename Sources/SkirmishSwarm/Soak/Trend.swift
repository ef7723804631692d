/// A robust straight-line fit of a series over time: the Theil–Sen estimator.
///
/// The slope is the median of the slopes between every pair of points, so up to ~29 % of the points can be wild (a
/// reconnect storm's burst of sockets, one allocation spike) without moving it; an ordinary least-squares fit would
/// follow them. A soak uses it to decide whether memory or file descriptors grow after warm-up.
package struct Trend: Sendable, Hashable, Codable {
    /// Units of the series per second.
    package var slopePerSecond: Double
    /// The median of the values.
    package var level: Double
    /// Seconds between the first and the last point.
    package var span: Double
    /// Points fitted.
    package var count: Int

    /// What the fitted line rises across the points' span (negative when it falls).
    package var growth: Double { slopePerSecond * span }

    /// The fit of `points` (time in seconds, value), or `nil` with fewer than two distinct times.
    package init?(_ points: [(t: Double, value: Double)]) {
        var slopes: [Double] = []
        slopes.reserveCapacity(points.count * max(points.count - 1, 0) / 2)
        for i in points.indices {
            for j in points.indices where j > i {
                let dt = points[j].t - points[i].t
                guard dt != 0, dt.isFinite else { continue }
                slopes.append((points[j].value - points[i].value) / dt)
            }
        }
        guard !slopes.isEmpty else { return nil }
        let times = points.map(\.t)
        slopePerSecond = Self.median(&slopes)
        var values = points.map(\.value)
        level = Self.median(&values)
        span = (times.max() ?? 0) - (times.min() ?? 0)
        count = points.count
    }

    /// The median; sorts `values` in place. The mean of the middle two for an even count.
    static func median(_ values: inout [Double]) -> Double {
        values.sort()
        let middle = values.count / 2
        return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
    }
}
