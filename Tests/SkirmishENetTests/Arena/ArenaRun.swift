import Foundation
import NIOPosix
import SkirmishENet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

// The "Your server speaks ENet" article's example, step 4: a program of your own runs the script, since the
// `skirmish` command knows only its built-in protocols.

/// Runs the arena script at `path` against `target` and prints the end-of-run table.
func runArena(_ path: String, target: Target) async throws -> RunSummary {
    let catalogue = Catalogue.arena()
    let script = try catalogue.scriptLoader.load(path: path)
    var configuration = SwarmConfiguration(
        script: script, plan: try LoadPlan(script: script), target: target, seed: 1, runID: script.name)
    configuration.catalogue = catalogue
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let swarm = try await Swarm(configuration: configuration, group: group)
    let outcome = await swarm.run()
    try await group.shutdownGracefully()
    let summary = RunSummary(
        outcome: outcome, configuration: configuration, scriptPath: path, startedAt: Date(), exporter: nil)
    print(summary.table())
    return summary
}
