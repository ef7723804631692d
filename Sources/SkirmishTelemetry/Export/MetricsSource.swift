/// Where the exporter gets its numbers: typically the swarm or server merging the snapshots of its shards.
///
/// Called on the exporter's own thread, never on an event loop; it may block (for example while each loop hands
/// over a snapshot), and it should stamp the snapshot with the current wall-clock time.
public protocol MetricsSource: Sendable {
    /// A merged snapshot of everything so far.
    func collect() -> MetricsSnapshot
}

/// A ``MetricsSource`` made from a closure.
public struct ClosureMetricsSource: MetricsSource {
    private let body: @Sendable () -> MetricsSnapshot

    /// A source that calls `body` on each collection.
    public init(_ body: @escaping @Sendable () -> MetricsSnapshot) {
        self.body = body
    }

    /// Calls the closure.
    public func collect() -> MetricsSnapshot { body() }
}
