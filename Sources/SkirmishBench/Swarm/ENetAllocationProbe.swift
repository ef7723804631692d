import Foundation
import NIOPosix
import SkirmishENet
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench enet`: heap allocations on the bots' loop per bot-tick for ENet bots against an ENet echo server,
/// in steady play — the same budget as SNAP's chasers (DESIGN §9: 0 per bot-tick, for every built-in plug-in).
///
/// In one process: a swarm of `payload` bots on one client loop, each sending a 32-byte message 30 times a second,
/// half reliably on channel 0 and half unreliably on channel 1, every echo matched to its request, timed and checked.
/// After a warm-up (connections up, buffers grown) the loop thread's allocation count (`BenchEnvironment`'s counter)
/// is read before and after a window and divided by the messages sent in it. The metric reads in the window (the
/// controller's one a second, and this probe's own) allocate on the loop too; their cost is measured apart and set
/// aside, as ``HotPathProbe`` does.
package enum ENetAllocationProbe {
    package struct Result: Sendable, Equatable, AllocationFigures {
        package var bots: Int
        package var seconds: Double
        /// Payload messages the bots sent in the window: one per bot-tick.
        package var botTicks: UInt64
        /// Echoes matched to their request in the window.
        package var replies: UInt64
        package var allocations: UInt64
        /// What one read of the loop's metrics allocates.
        package var perMetricsRead: UInt64

        /// The closing line.
        package var line: String {
            String(
                format: "enet allocations: %d bots, %.1f s: %llu bot-ticks, %llu echoes; %llu allocations = %.3f per "
                    + "bot-tick (%.3f without the %llu of each metrics read)",
                bots, seconds, botTicks, replies, allocations, perBotTick, perBotTickExcludingReads, perMetricsRead)
        }
    }

    /// Runs `bots` payload bots against the ENet echo server at `target` (it must echo each packet to its sender
    /// on the same channel with the same flags, as the ENet tests' libenet peer does).
    package static func run(
        bots: Int, target: Target, warmup: Int = 4, window: Int = 4, environment: BenchEnvironment
    ) async throws -> Result {
        let template = "[{bytes: \"0a0b\"}, {sequence: u32}, {random: 18}, {time: f64}]"
        let yaml = """
            name: bench-enet-allocations
            protocol: {name: enet, channels: 2}
            profile: [{ramp: {to: \(bots), over: 1s}}, {hold: {for: \(warmup + window + 2)s}}]
            personas:
              - {name: reliable, behavior: payload, payload: {channel: 0, rate: 30hz, template: \(template)}}
              - name: unreliable
                behavior: payload
                payload: {channel: 1, delivery: unreliable, rate: 30hz, template: \(template)}
            """
        let catalogue = Catalogue.builtIn.registeringENet()
        let script = try catalogue.scriptLoader.parse(yaml, file: "bench-enet-allocations.yaml")
        let plan = try LoadPlan(script: script, overrides: .init())
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = SwarmConfiguration(
            script: script, plan: plan, target: target, seed: 1, runID: "bench-enet", loops: 1)
        configuration.catalogue = catalogue
        let swarm = try await Swarm(configuration: configuration, group: group)
        let measured = try await AllocationWindow.measure(
            swarm, warmup: .seconds(1 + warmup), window: .seconds(window), environment: environment
        ) { snapshot in
            (
                messages: snapshot.counterTotal(SkirmishMetrics.packetsSent, where: ["type": "reliable/ch0"])
                    + snapshot.counterTotal(SkirmishMetrics.packetsSent, where: ["type": "unreliable/ch1"]),
                replies: snapshot.counterTotal(SkirmishMetrics.checks, where: ["check": "echo_matched"])
            )
        }
        try? await group.shutdownGracefully()
        let (before, after) = (measured.before, measured.after)
        return Result(
            bots: bots, seconds: measured.seconds, botTicks: after.messages &- before.messages,
            replies: after.replies &- before.replies, allocations: measured.allocations,
            perMetricsRead: measured.perMetricsRead)
    }
}
