import Testing

@testable import SkirmishBench

/// The in-process server profile, whose clients are SNAP's own connections: a few matches on the simulated clock.
@Suite struct ServerCoreProfileTests {
    /// Every client is seated and acknowledges what the core sends reliably, so over 3 simulated seconds (15 times
    /// the core's first retransmission timeout) it resends nothing; inputs and snapshots flow both ways.
    @Test func seatsEveryClientAndTheCoreResendsNothing() throws {
        let environment = BenchEnvironment(threadAllocations: { 0 })
        let result = try ServerCoreProfile(matches: 3, ticks: 120, inputRate: 30).run(environment: environment)
        #expect(result.welcomed == 6)
        #expect(result.resends == 0)
        #expect(result.inputNanoseconds > 0)
        // One snapshot per client every other tick: a match's two clients take one a tick between them.
        #expect(abs(result.packetsOutPerTick - 3) < 0.5)
    }
}
