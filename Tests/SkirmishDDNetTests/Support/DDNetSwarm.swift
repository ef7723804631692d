import Foundation
import NIOPosix
import SkirmishDDNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// A whole swarm run of a DDNet script, as `skirmish swarm` would run it, in-process: the script loaded by a
/// catalogue with DDNet registered, one client loop, and the summary the command would print.
enum DDNetSwarm {
    /// The standard catalogue's DDNet part: SNAP's built-ins plus `registerDDNet()`.
    static let catalogue: Catalogue = {
        var catalogue = Catalogue.builtIn
        catalogue.registerDDNet()
        return catalogue
    }()

    struct Run {
        var summary: RunSummary
        var outcome: SwarmOutcome
    }

    /// Runs `yaml` against the server on `port` (personas with their own `target:` go there instead).
    static func run(_ yaml: String, port: UInt16, seed: UInt64 = 7) async throws -> Run {
        let script = try catalogue.scriptLoader.parse(yaml, file: "ddnet-test.yaml")
        let plan = try LoadPlan(script: script)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: Int(port)),
            seed: seed, runID: "ddnet-test", loops: 1)
        configuration.catalogue = catalogue
        let swarm = try await Swarm(configuration: configuration, group: group)
        let outcome = await swarm.run()
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "ddnet-test.yaml", startedAt: Date(),
            exporter: nil)
        try await group.shutdownGracefully()
        return Run(summary: summary, outcome: outcome)
    }
}

extension DDNetServer {
    /// The names of the players the server let into the game so far, one per `team_join player='ID:name'` line
    /// (a player who enters twice is there twice).
    var joinedNames: [String] {
        output.all.compactMap { line in
            guard let start = line.range(of: "team_join player='") else { return nil }
            let rest = line[start.upperBound...]
            guard let end = rest.firstIndex(of: "'"), let colon = rest[..<end].firstIndex(of: ":") else { return nil }
            return String(rest[rest.index(after: colon)..<end])
        }
    }
}
