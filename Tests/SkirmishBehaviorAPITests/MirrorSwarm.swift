import Foundation
import NIOCore
import NIOPosix
import SkirmishServer
import SkirmishSwarm
import SkirmishWire

/// What `skirmish swarm` does, in a program of one's own that knows the mirror.
enum MirrorSwarm {
    /// Runs the script at `path` with the mirror registered, against `target` or, without one, against the reference
    /// server started in-process on loopback; writes the results folder `out` and returns the run's summary.
    static func run(scriptAt path: String, target: Target? = nil, tally: MirrorTally, out: String) async throws
        -> RunSummary
    {
        let catalogue = Catalogue.withMirror(tally: tally)
        let script = try catalogue.scriptLoader.load(path: path)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        // No target of your own: the reference server on loopback, as `skirmish swarm` without `--target`.
        var server: ReferenceServer?
        if target == nil {
            server = try await ReferenceServer.start(configuration: ServerConfiguration(), group: group)
        }
        let local = Target(transport: .udp, host: "127.0.0.1", port: server?.addresses.udp?.port ?? 0)
        var configuration = SwarmConfiguration(
            script: script, plan: try LoadPlan(script: script), target: target ?? local, seed: 1, runID: script.name)
        configuration.catalogue = catalogue

        let swarm = try await Swarm(configuration: configuration, group: group)
        let startedAt = Date()
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: path, startedAt: startedAt, exporter: nil)
        try RunOutput.write(summary: summary, outcome: outcome, to: out)

        await server?.shutdown()
        try await group.shutdownGracefully()
        return summary
    }
}
