import SkirmishSwarm
import SkirmishTelemetry

/// Heap allocations on a swarm's loops over a window of steady play: what the allocation probes of every plug-in
/// (``HotPathProbe``, ``DDNetHotPathProbe``, ``ENetAllocationProbe``) measure the same way.
///
/// The swarm runs a warm-up (connections up, buffers grown), then the loops' allocation count and the probe's own
/// counters (`read`, from a metrics snapshot) are taken before and after the window. The metric reads in the window
/// (the run's controller reads once a second, the probe twice) allocate on the loops too: what one read costs is
/// measured after the window and set apart (``perBotTick(excludingReads:)``).
package struct AllocationWindow<Reading: Sendable>: Sendable {
    /// The window's length, in seconds.
    package var seconds: Double
    /// Allocations on the loops in the window.
    package var allocations: UInt64
    /// What one read of the loops' metrics allocates.
    package var perMetricsRead: UInt64
    /// The probe's counters at the window's start and end.
    package var before: Reading
    package var after: Reading

    /// Runs `swarm` (its plan must outlast `warmup` and `window`) and measures the window; the run is cancelled after.
    package static func measure(
        _ swarm: Swarm, warmup: Duration, window: Duration, environment: BenchEnvironment,
        read: @escaping @Sendable (MetricsSnapshot) -> Reading
    ) async throws -> AllocationWindow {
        let threadAllocations = environment.threadAllocations
        func sample() async -> (UInt64, Reading) {
            let allocations = await swarm.onEachLoop { threadAllocations() }.reduce(0, +)
            return (allocations, read(await swarm.snapshot()))
        }
        let running = Task { await swarm.run() }
        defer { running.cancel() }
        try await Task.sleep(for: warmup)
        let (allocationsBefore, before) = await sample()
        let started = ContinuousClock.now
        try await Task.sleep(for: window)
        let (allocationsAfter, after) = await sample()
        let elapsed = ContinuousClock.now - started
        let readsBefore = await swarm.onEachLoop { threadAllocations() }.reduce(0, +)
        _ = await swarm.snapshot()
        let readsAfter = await swarm.onEachLoop { threadAllocations() }.reduce(0, +)
        running.cancel()
        _ = await running.value
        return AllocationWindow(
            seconds: elapsed.seconds, allocations: allocationsAfter &- allocationsBefore,
            perMetricsRead: readsAfter &- readsBefore, before: before, after: after)
    }
}

/// Allocations per bot-tick, whole and with the window's metric reads set apart.
package protocol AllocationFigures {
    var seconds: Double { get }
    var botTicks: UInt64 { get }
    var allocations: UInt64 { get }
    var perMetricsRead: UInt64 { get }
}

extension AllocationFigures {
    package var perBotTick: Double { botTicks > 0 ? Double(allocations) / Double(botTicks) : 0 }

    /// Allocations per bot-tick once the metric reads in the window (the controller's one a second and the probe's
    /// own) are set apart.
    package var perBotTickExcludingReads: Double {
        let reads = UInt64(seconds.rounded()) + 1
        let rest = allocations > reads * perMetricsRead ? allocations - reads * perMetricsRead : 0
        return botTicks > 0 ? Double(rest) / Double(botTicks) : 0
    }
}
