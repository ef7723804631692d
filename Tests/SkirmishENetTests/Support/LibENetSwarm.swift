import Foundation
import Logging
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire
import Synchronization

/// A swarm of ENet bots against a ``LibENetPeer`` on loopback, loaded and run as the product runs one (a catalogue's
/// script loader, ``Swarm``, ``RunSummary``), in a task of its own: a test acts on the server while the swarm runs,
/// waits on the swarm's own figures with a deadline, and ends the run as soon as what it waits for has happened, so
/// a plan can be generous on a busy machine without making the test slow.
final class LibENetSwarm {
    let configuration: SwarmConfiguration
    let swarm: Swarm
    /// Every line the swarm logged (its handshake failures name their cause).
    let log = LogLines()
    private let group: MultiThreadedEventLoopGroup
    private let task: Task<SwarmOutcome, Never>

    /// Loads `yaml` with `catalogue` and starts it against `port` on 127.0.0.1.
    init(
        _ yaml: String, catalogue: Catalogue = Catalogue().registeringENet(), port: UInt16, seed: UInt64 = 5
    ) async throws {
        let script = try catalogue.scriptLoader.parse(yaml, file: "enet-test.yaml")
        var configuration = SwarmConfiguration(
            script: script, plan: try LoadPlan(script: script),
            target: Target(transport: .udp, host: "127.0.0.1", port: Int(port)), seed: seed, runID: script.name,
            loops: 1)
        configuration.catalogue = catalogue
        self.configuration = configuration
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sink = log
        let logger = Logger(label: "enet-test") { _ in CapturingLogHandler(sink: sink) }
        let swarm = try await Swarm(configuration: configuration, group: group, logger: logger)
        self.swarm = swarm
        task = Task { await swarm.run() }
    }

    /// Waits (polling the swarm's merged metrics every 100 ms) until `condition` holds or `limit` passes; returns
    /// whether it held.
    func waitUntil(within limit: Duration, _ condition: (MetricsSnapshot) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while true {
            if condition(await swarm.snapshot()) { return true }
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Ends the run (at once if it is still going) and returns its summary and outcome.
    func finish() async throws -> (summary: RunSummary, outcome: SwarmOutcome) {
        task.cancel()
        let outcome = await task.value
        try await group.shutdownGracefully()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "enet-test.yaml", startedAt: Date(),
            exporter: nil)
        return (summary, outcome)
    }
}

/// Waits (polling its output every 50 ms) until the libenet peer printed a line that makes `condition` true of all
/// its lines, or `limit` passes; returns whether it did.
func waitForPeer(_ peer: LibENetPeer, within limit: Duration, _ condition: ([String]) -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        peer.drain()
        if condition(peer.lines) { return true }
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(50))
    }
}

/// The libenet peer's counters once they stop changing toward `settled` (polled for up to `limit`): what the bots
/// sent last may still be crossing loopback when the swarm ends.
func settledStats(
    _ peer: LibENetPeer, within limit: Duration, until settled: ([String: [String: Int]]) -> Bool
) async throws -> [String: [String: Int]] {
    let deadline = ContinuousClock.now + limit
    var stats = try peer.stats()
    while !settled(stats), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(50))
        stats = try peer.stats()
    }
    return stats
}

/// Lines logged, kept for the test to read.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }
}

/// A log handler that keeps each line with its metadata in a ``LogLines``.
struct CapturingLogHandler: LogHandler {
    let sink: LogLines
    var logLevel = Logger.Level.info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        sink.append(
            "\(event.level) \(event.message) "
                + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
    }
}
