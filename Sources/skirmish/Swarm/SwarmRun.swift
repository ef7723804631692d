import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire
import Synchronization

/// The run path `skirmish swarm` and `skirmish soak` share: load and plan the script, start the embedded server
/// (or aim at `--target`), the swarm, the exporter and the loopback `/metrics`; run until the plan ends or SIGINT /
/// SIGTERM; then push once more, write the results folder and print the table.
struct SwarmRun {
    let options: RunOptions
    let configuration: SwarmConfiguration
    let swarm: Swarm
    let exporter: Exporter?
    let outDirectory: String
    let startedAt: Date
    private let server: ReferenceServer?
    private let metricsEndpoint: MetricsEndpoint
    private let source: CombinedMetricsSource
    private let interruption = Interruption()
    private let group: MultiThreadedEventLoopGroup
    private let sideGroup: MultiThreadedEventLoopGroup
    private let baseline: RunSummary?

    /// The exit status a signal asks for (130 SIGINT, 143 SIGTERM), once ``run(alongside:)`` returned.
    var signalExitStatus: Int32? { interruption.exitStatus }

    /// Starts everything but the bots; bad input throws ``InputError``.
    static func start(_ options: RunOptions, command: String) async throws -> SwarmRun {
        let started = Date()
        let script: Script
        do {
            script = try ScriptLoader().load(path: options.script)
        } catch {
            throw InputError(String(describing: error))
        }
        let plan = try makePlan(script, options: options)
        let baseline = try options.baseline.map { try SummaryFile.load($0, role: "baseline") }
        let runID = options.givenRunID() ?? RunID.make(script: script.name, at: started)
        let outDirectory = options.out ?? "skirmish-out/\(runID)"
        if let note = try limitNote(plan) { Console.note(note) }
        var targets: (Target, [Transport: Target])?
        if let text = options.target {
            do {
                targets = (try Target(parsing: text), [:])
            } catch {
                throw InputError("--target \(text): \(error)")
            }
        }
        try ensureWritable(outDirectory)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, options.loops))
        let sideGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var server: ReferenceServer?
        if targets == nil {
            var serverConfiguration = ServerConfiguration()
            // The embedded server's series carry this run's labels, so dashboards show it beside its bots.
            serverConfiguration.metricLabels = ["run": runID, "shard": plan.shard.description]
            let embedded = try await ReferenceServer.start(
                configuration: serverConfiguration, group: sideGroup,
                logger: options.logs.logger("skirmish.server", run: runID))
            server = embedded
            targets = EmbeddedTargets.of(embedded)
            Console.note("embedded server: \(embedded.addresses.listeningLines.joined(separator: ", "))")
        }
        guard let targets else { throw InputError("no target to run against") }

        var configuration = SwarmConfiguration(
            script: script, plan: plan, target: targets.0, seed: options.seed, runID: runID, loops: options.loops)
        configuration.alternates = targets.1
        let swarm = try await Swarm(
            configuration: configuration, group: group, logger: options.logs.logger("skirmish.swarm", run: runID))
        let source = CombinedMetricsSource(parts: [swarm.metricsSource] + (server.map { [$0.metricsSource] } ?? []))
        let exporter = try options.push.makeExporter(
            source: source, runID: runID, shard: plan.shard,
            logger: options.logs.logger("skirmish.exporter", run: runID))
        exporter?.start()
        let metricsEndpoint: MetricsEndpoint
        do {
            metricsEndpoint = try await MetricsEndpoint.start(
                source: source, host: options.metrics.host, port: options.metrics.port, group: sideGroup)
        } catch {
            throw InputError(
                "--metrics \(options.metrics.defaultValueDescription): cannot listen there (\(error)); pick a free "
                    + "port or 127.0.0.1:0")
        }
        Console.note(
            "\(command) \(runID): \(script.name), \(plan.peakClosedBots) bots peak, \(Format.duration(plan.duration)), "
                + "shard \(plan.shard.fraction), seed \(options.seed); metrics at \(metricsEndpoint.url)")
        return SwarmRun(
            options: options, configuration: configuration, swarm: swarm, exporter: exporter,
            outDirectory: outDirectory, startedAt: started, server: server, metricsEndpoint: metricsEndpoint,
            source: source, group: group, sideGroup: sideGroup, baseline: baseline)
    }

    /// Runs the swarm until its plan ends or SIGINT/SIGTERM arrives, with `alongside` (a soak's health checks)
    /// running beside it and cancelled — and awaited — before this returns.
    func run(alongside: (@Sendable () async -> Void)? = nil) async -> SwarmOutcome {
        let exporter = self.exporter
        let progress = ProgressPrinter(plain: options.plainProgress) { exporter?.stats.liveStatus }
        let swarm = self.swarm
        let interruption = self.interruption
        let outcome = await withTaskGroup(of: SwarmOutcome?.self) { tasks in
            let run = Task { await swarm.run { progress.update($0) } }
            tasks.addTask { await run.value }
            tasks.addTask {
                guard let name = await Signals.firstTermination() else { return nil }
                interruption.signal.withLock { $0 = name }
                Console.note("\(name): stopping the run, pushing the final metrics and writing the summary")
                run.cancel()
                return nil
            }
            if let alongside {
                tasks.addTask {
                    await alongside()
                    return nil
                }
            }
            var outcome: SwarmOutcome?
            while outcome == nil, let next = await tasks.next() {
                if let next { outcome = next }
            }
            tasks.cancelAll()
            if let outcome { return outcome }
            return await run.value
        }
        progress.finish()
        return outcome
    }

    /// Stops the exporter with a final push, closes the listeners, writes the results folder (after `amend` had its
    /// say on the summary) and prints the table; returns the summary.
    @discardableResult
    func finish(_ outcome: SwarmOutcome, amend: (inout RunSummary) -> Void = { _ in }) async throws -> RunSummary {
        if let exporter { await offCooperativePool { exporter.stop(finalPush: true) } }
        // From here /metrics serves the final figures (the embedded server's included, read before it stops).
        let source = self.source
        let endpoint = metricsEndpoint
        let final = Mutex<MetricsSnapshot?>(nil)
        await offCooperativePool {
            let snapshot = source.collect()
            endpoint.freeze(snapshot)
            final.withLock { $0 = snapshot }
        }
        let serverStats = try? await server?.metricsText()
        await server?.shutdown()

        var summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: options.script, startedAt: startedAt,
            exporter: exporter?.stats)
        summary.server = final.withLock { $0 }.flatMap(ServerFigures.init(snapshot:))
        if summary.server == nil, let url = options.serverMetrics {
            let scraped = Mutex<Result<ServerFigures, ServerFigures.ScrapeError>?>(nil)
            await offCooperativePool { scraped.withLock { $0 = ServerFigures.scrape(url) } }
            switch scraped.withLock({ $0 }) {
            case .success(let figures): summary.server = figures
            case .failure(let error): Console.note("server figures not in the report: \(error)")
            case nil: break
            }
        }
        amend(&summary)
        if let baseline { summary.comparison = Comparison(base: baseline, new: summary) }
        let written = try RunOutput.write(
            summary: summary, outcome: outcome, to: outDirectory, serverMetrics: serverStats)
        print(summary.table())
        if let soak = summary.soak {
            print("")
            print("health after \(Format.duration(.seconds(soak.elapsedSeconds))), \(soak.checks) checks:")
            for line in soak.lines() { print(line) }
        }
        print("results: \(written.joined(separator: ", "))")
        if let warning = summary.generatorWarning { Console.note(warning) }
        if outcome.interrupted { Console.note("stopped early by a signal; the figures cover the run so far") }
        if let aborted = summary.aborted {
            Console.note(
                "stopped early at \(Int(aborted.atSeconds)) s: \(aborted.threshold) failed and has abort_on_fail; the "
                    + "figures cover the run so far")
        }
        // A scraper that followed the run reads the final figures once more before the endpoint goes away.
        await metricsEndpoint.waitForFinalScrape(limit: .seconds(options.metricsLinger))
        try? await metricsEndpoint.close()
        try? await group.shutdownGracefully()
        try? await sideGroup.shutdownGracefully()
        return summary
    }

    private static func makePlan(_ script: Script, options: RunOptions) throws -> LoadPlan {
        var overrides = LoadPlan.Overrides(bots: options.bots)
        if let duration = options.duration {
            guard let parsed = Quantity.duration(duration) else {
                throw InputError("--duration \(duration): not a duration; write it like 30s, 5m or 2h")
            }
            overrides.duration = parsed
        }
        if let rate = options.rate {
            guard let parsed = Quantity.rate(rate) else {
                throw InputError("--rate \(rate): not a rate; write it like 50/s or 30hz")
            }
            overrides.rate = parsed
        }
        let shard: Shard
        if let text = options.shard {
            guard let parsed = Shard(text) else {
                throw InputError("--shard \(text): write it as i/n with 0 ≤ i < n, e.g. 0/4")
            }
            shard = parsed
        } else {
            do {
                shard = try Shard.fromEnvironment() ?? .whole
            } catch {
                throw InputError(error.description)
            }
        }
        do {
            return try LoadPlan(script: script, overrides: overrides, shard: shard)
        } catch {
            throw InputError("\(options.script): \(error)")
        }
    }

    /// Checks before anything starts that the results folder can be written (creating it), so a run never plays
    /// for hours to fail at its last step.
    private static func ensureWritable(_ directory: String) throws {
        let probe = URL(fileURLWithPath: directory).appendingPathComponent(".skirmish-write-check-\(getpid())")
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data().write(to: probe)
            try FileManager.default.removeItem(at: probe)
        } catch {
            throw InputError(
                "--out \(directory): cannot write results there (\(error.localizedDescription)); choose a folder you "
                    + "can write to")
        }
    }

    private static func limitNote(_ plan: LoadPlan) throws -> String? {
        let peak = plan.peakClosedBots + plan.peakOpenBots
        do {
            return try OpenFileLimit.ensure(peak + 256)
        } catch {
            throw InputError(String(describing: error))
        }
    }
}

/// Which termination signal stopped a run, if one did: the process exits `128 + signo` after writing everything.
final class Interruption: Sendable {
    let signal = Mutex<String?>(nil)

    /// 130 after SIGINT, 143 after SIGTERM (the shell's convention), `nil` for a run that ended on its own.
    var exitStatus: Int32? {
        switch signal.withLock({ $0 }) {
        case "SIGINT": 130
        case "SIGTERM": 143
        default: nil
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

/// The swarm's metrics merged with the embedded server's, so one push or scrape carries both.
struct CombinedMetricsSource: MetricsSource {
    let parts: [any MetricsSource]

    func collect() -> MetricsSnapshot {
        var merged = MetricsSnapshot()
        for part in parts { merged.merge(part.collect()) }
        return merged
    }
}
