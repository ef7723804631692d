/// Bytes per second each way, for a bandwidth family with a `direction` label (`sent`, `received`).
public struct TrafficFigures: Sendable, Codable, Hashable {
    /// What was sent (by the bot, or by the server to a match's players).
    public var sent: RateFigures
    /// What was received (by the bot, or by the server from a match's players).
    public var received: RateFigures

    /// The figures of `family`'s series in `snapshot` that match `filter`, split by `direction`.
    public init(_ family: MetricFamily, in snapshot: MetricsSnapshot, where filter: [String: String] = [:]) {
        sent = RateFigures(snapshot.histogram(family, where: filter.merging(["direction": "sent"]) { $1 }))
        received = RateFigures(snapshot.histogram(family, where: filter.merging(["direction": "received"]) { $1 }))
    }

    /// Sent and received figures as they are.
    public init(sent: RateFigures, received: RateFigures) {
        self.sent = sent
        self.received = received
    }
}
