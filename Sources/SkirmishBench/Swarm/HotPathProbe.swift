import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench swarm --part allocations`: heap allocations on the bots' loop per bot-tick, in steady play.
///
/// In one process: the reference server (UDP, its own NIO loop) and a swarm of 30 Hz chasers on one client loop.
/// After a warm-up (seats taken, buffers grown) the loop thread's allocation count (the `CAllocCounter` interposer
/// counts malloc, calloc, realloc and memalign per thread) is read before and after a window, and divided by the
/// inputs sent in it. A match ending and the next one starting allocate (a new session, a new agent): that cost is
/// reported apart, per match, so the steady per-tick figure is not hidden behind it.
package enum HotPathProbe {
    package struct Result: Sendable, Equatable, AllocationFigures {
        package var bots: Int
        package var seconds: Double
        package var botTicks: UInt64
        package var snapshots: UInt64
        package var allocations: UInt64
        package var matches: UInt64
        /// What one read of the loop's metrics allocates (the run's controller reads them once a second, and this
        /// probe twice): work of the reporting path, not of a bot-tick.
        package var perMetricsRead: UInt64

    }

    package static func run(
        bots: Int, warmup: Int = 4, window: Int = 4, environment: BenchEnvironment
    ) async throws -> Result {
        let yaml = """
            name: bench-allocations
            profile: [{ramp: {to: \(bots), over: 1s}}, {hold: {for: \(warmup + window + 2)s}}]
            personas: [{name: chaser, game: puck, behavior: chaser, input_rate: 30hz}]
            """
        let script = try Catalogue.builtIn.scriptLoader.parse(yaml, file: "bench-allocations.yaml")
        let plan = try LoadPlan(script: script, overrides: .init())
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.tcp = nil
        serverConfiguration.http = nil
        let server = try await ReferenceServer.start(configuration: serverConfiguration, group: group)
        guard let port = server.addresses.udp?.port else { throw BenchError("the server did not bind UDP") }
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 1,
            runID: "bench", loops: 1)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let measured = try await AllocationWindow.measure(
            swarm, warmup: .seconds(1 + warmup), window: .seconds(window), environment: environment
        ) { snapshot in
            (
                inputs: snapshot.counterTotal(SkirmishMetrics.packetsSent, where: ["type": "PaddleState"]),
                snapshots: snapshot.counterTotal(SkirmishMetrics.packetsReceived, where: ["type": "TableSnapshot"]),
                matches: snapshot.counterTotal(SkirmishMetrics.matchesStarted)
            )
        }
        await server.shutdown()
        try? await group.shutdownGracefully()
        let (before, after) = (measured.before, measured.after)
        return Result(
            bots: bots, seconds: measured.seconds, botTicks: after.inputs &- before.inputs,
            snapshots: after.snapshots &- before.snapshots, allocations: measured.allocations,
            matches: after.matches &- before.matches, perMetricsRead: measured.perMetricsRead)
    }
}
