import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry

/// `skirmish swarm SCRIPT`: the main job.
struct SwarmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swarm",
        abstract: "Run a swarm of scripted bots against a game server and report what players would feel.",
        discussion: """
            A script (bots/*.yaml) names a load profile, weighted personas and pass/fail thresholds. Bots join \
            matches through the real wire protocol, play them, and measure round trips, snapshot age, tick \
            lateness, handshake time, loss, resends and desyncs.

            Without --target the embedded reference server starts in this process on free loopback ports, so a \
            fresh machine needs nothing else:

              skirmish swarm bots/quickstart.yaml
              skirmish swarm bots/puck-ladder.yaml --bots 2000 --duration 2m --target udp://10.0.0.5:4000
              skirmish swarm bots/soak.yaml --push http://127.0.0.1:8428/api/v1/import/prometheus --format vm

            Results go to --out (default skirmish-out/<run id>/): summary.json, metrics.om (OpenMetrics) and \
            report.html. While the run lasts, its metrics are served as Prometheus text at a loopback /metrics \
            URL printed at the start (or pushed with --push).

            Exit status: 0 when every threshold holds, 99 when one fails, 2 for bad input (script, flags, target).
            """
    )

    @Argument(help: ArgumentHelp("The swarm script to run.", valueName: "script.yaml"))
    var script: String

    @Option(help: "Peak concurrent bots: scales every ramp of the profile to this peak.")
    var bots: Int?

    @Option(
        help: ArgumentHelp("Run length (e.g. 30s, 5m): stretches the hold and arrival stages.", valueName: "duration"))
    var duration: String?

    @Option(help: ArgumentHelp("Arrival rate of an open-model profile (e.g. 50/s).", valueName: "rate"))
    var rate: String?

    @Option(
        help: ArgumentHelp(
            "The server to load: udp://host:port, tcp://host:port or ws://host:port/path. Default: the embedded server.",
            valueName: "url"))
    var target: String?

    @Option(
        help: ArgumentHelp(
            "This process's slice of the bots, i/n (default: from JOB_COMPLETION_INDEX / JOB_COMPLETIONS, else 0/1).",
            valueName: "i/n"))
    var shard: String?

    @Option(help: "Seed for bots, personas and emulated links: the same seed replays the same run.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Results folder (default skirmish-out/<run id>).", valueName: "dir"))
    var out: String?

    @OptionGroup var push: PushOptions

    @Option(help: "Event loops (threads) for the bots (default: one per core).")
    var loops = System.coreCount

    @Flag(help: "Print a plain progress line every 5 s even on a terminal.")
    var plainProgress = false

    func run() async throws {
        try await InputError.reporting { try await runSwarm() }
    }

    private func runSwarm() async throws {
        let started = Date()
        let script: Script
        do {
            script = try ScriptLoader().load(path: self.script)
        } catch {
            throw InputError(String(describing: error))
        }
        let plan = try makePlan(script)
        let runID = RunID.make(script: script.name, at: started)
        let outDirectory = out ?? "skirmish-out/\(runID)"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, loops))
        let sideGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

        if let note = try limitNote(plan) { Console.note(note) }

        var server: ReferenceServer?
        let targets: (Target, [Transport: Target])
        if let text = target {
            do {
                targets = (try Target(parsing: text), [:])
            } catch {
                throw InputError("--target \(text): \(error)")
            }
        } else {
            let embedded = try await ReferenceServer.start(configuration: ServerConfiguration(), group: sideGroup)
            server = embedded
            targets = EmbeddedTargets.of(embedded)
            Console.note("embedded server: \(embedded.addresses.listeningLines.joined(separator: ", "))")
        }

        var configuration = SwarmConfiguration(
            script: script, plan: plan, target: targets.0, seed: seed, runID: runID, loops: loops)
        configuration.alternates = targets.1
        let swarm = try await Swarm(configuration: configuration, group: group)
        let exporter = try push.makeExporter(source: swarm.metricsSource, runID: runID, shard: plan.shard)
        exporter?.start()
        let metricsEndpoint = try await MetricsEndpoint.start(swarm: swarm, group: sideGroup)
        Console.note(
            "run \(runID): \(script.name), \(plan.peakClosedBots) bots peak, \(Format.duration(plan.duration)), "
                + "shard \(plan.shard), seed \(seed); metrics at \(metricsEndpoint.url)")

        let progress = ProgressPrinter(plain: plainProgress)
        let outcome = await runUntilSignal(swarm, progress: progress)
        progress.finish()

        exporter?.stop(finalPush: true)
        try? await metricsEndpoint.close()
        let serverStats = try? await server?.metricsText()
        await server?.shutdown()

        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: self.script, startedAt: started,
            exporter: exporter?.stats)
        let written = try RunOutput.write(
            summary: summary, outcome: outcome, to: outDirectory, serverMetrics: serverStats)
        print(summary.table())
        print("results: \(written.joined(separator: ", "))")
        if let warning = summary.generatorWarning { Console.note(warning) }
        if outcome.interrupted { Console.note("stopped early by a signal; the figures cover the run so far") }
        try? await group.shutdownGracefully()
        try? await sideGroup.shutdownGracefully()
        if !summary.passed { throw ExitCode(99) }
    }

    private func makePlan(_ script: Script) throws -> LoadPlan {
        var overrides = LoadPlan.Overrides(bots: bots)
        if let duration {
            guard let parsed = Quantity.duration(duration) else {
                throw InputError("--duration \(duration): not a duration; write it like 30s, 5m or 2h")
            }
            overrides.duration = parsed
        }
        if let rate {
            guard let parsed = Quantity.rate(rate) else {
                throw InputError("--rate \(rate): not a rate; write it like 50/s or 30hz")
            }
            overrides.rate = parsed
        }
        let shard: Shard
        if let text = self.shard {
            guard let parsed = Shard(text) else {
                throw InputError("--shard \(text): write it as i/n with 0 ≤ i < n, e.g. 0/4")
            }
            shard = parsed
        } else {
            shard = Shard.fromEnvironment() ?? .whole
        }
        do {
            return try LoadPlan(script: script, overrides: overrides, shard: shard)
        } catch {
            throw InputError("\(self.script): \(error)")
        }
    }

    private func limitNote(_ plan: LoadPlan) throws -> String? {
        let peak = plan.peakClosedBots + plan.peakOpenBots
        do {
            return try OpenFileLimit.ensure(peak + 256)
        } catch {
            throw InputError(String(describing: error))
        }
    }

    /// Runs the swarm until its plan ends or SIGINT/SIGTERM arrives, whichever is first.
    private func runUntilSignal(_ swarm: Swarm, progress: ProgressPrinter) async -> SwarmOutcome {
        await withTaskGroup(of: SwarmOutcome?.self) { tasks in
            let run = Task { await swarm.run { progress.update($0) } }
            tasks.addTask { await run.value }
            tasks.addTask {
                guard let name = await Signals.firstTermination() else { return nil }
                Console.note("\(name): stopping the swarm, writing the summary")
                run.cancel()
                return nil
            }
            var outcome: SwarmOutcome?
            while outcome == nil, let next = await tasks.next() {
                if let next { outcome = next }
                if next == nil { break }
            }
            tasks.cancelAll()
            if let outcome { return outcome }
            return await run.value
        }
    }
}

/// The embedded server's addresses as swarm targets.
enum EmbeddedTargets {
    static func of(_ server: ReferenceServer) -> (Target, [Transport: Target]) {
        var alternates: [Transport: Target] = [:]
        var primary: Target?
        if let udp = server.addresses.udp, let port = udp.port {
            primary = Target(transport: .udp, host: "127.0.0.1", port: port)
            alternates[.udp] = primary
        }
        if let tcp = server.addresses.tcp, let port = tcp.port {
            alternates[.tcp] = Target(transport: .tcp, host: "127.0.0.1", port: port)
        }
        if let http = server.addresses.http, let port = http.port {
            alternates[.webSocket] = Target(transport: .webSocket, host: "127.0.0.1", port: port, path: "/ws")
        }
        return (primary ?? alternates.values.first!, alternates)
    }
}
