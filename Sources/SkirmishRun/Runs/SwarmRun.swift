import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SkirmishNet
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire
import Synchronization

/// What `skirmish swarm` and `skirmish soak` run, as one ``ServiceGroup``: the embedded server (unless a target is
/// given), the `/metrics` endpoint, the report, the exporter, the swarm and a soak's health checks, in that start
/// order. The group stops them in reverse: the bots first, then the final push, the report (the final figures frozen
/// for `/metrics`, the results folder, the table), the last scrape, and the server's `ServerQuit` to players.
///
/// The plan's end, SIGINT, SIGTERM or ``triggerGracefulShutdown()`` all stop the run that way. A part that cannot start
/// (a taken port) cancels the others: every port and loop is released and ``run()`` throws that part's error.
package final class SwarmRun: Sendable {
    /// Everything a run needs, checked before it starts.
    package struct Settings: Sendable {
        /// "run" for `skirmish swarm`, "soak" for `skirmish soak`: the first word of the start note.
        package var command = "run"
        package var script: Script
        /// The protocols and behaviours the script was loaded with.
        package var catalogue: Catalogue = .standard
        package var scriptPath: String
        package var plan: LoadPlan
        package var runID: String
        package var seed: UInt64 = 1
        package var loops = 1
        /// The server to load and its alternates per transport; `nil` starts the embedded server.
        package var target: (Target, [Transport: Target])?
        /// The embedded server's settings (the run's labels are added to its series).
        package var embeddedServer = ServerConfiguration()
        package var outDirectory: String
        package var startedAt = Date()
        /// Makes the exporter pushing the run's metrics (`nil`: no `--push`).
        package var makeExporter: @Sendable (any MetricsSource) throws -> Exporter? = { _ in nil }
        package var metricsHost = "127.0.0.1"
        package var metricsPort = 0
        package var metricsLinger = Duration.seconds(5)
        /// With a target: its Prometheus `/metrics`, scraped at the end for the report's server figures.
        package var serverMetricsURL: String?
        package var baseline: RunSummary?
        /// The per-second JSON-lines and CSV files written as the run goes (`--out-stream`, `--out-csv`).
        package var stream: RunStream?
        /// As one shard of a run written to `<run folder>/<shard>`, merge the run's shards into
        /// `<run folder>/merged` when this is the last to finish (``SwarmRun/mergeShards(after:console:)``).
        package var mergeShards = false
        /// Health checks for a soak.
        package var soak: Soak?
        /// Makes the logger of each part from its label (`skirmish.server`, `skirmish.swarm`, `skirmish.soak`); the
        /// command adds the run id.
        package var makeLogger: @Sendable (String) -> Logger = { Logger(label: $0) }

        package struct Soak: Sendable {
            package var policy: HealthPolicy
            package var interval: Duration

            package init(policy: HealthPolicy, interval: Duration) {
                self.policy = policy
                self.interval = interval
            }
        }

        package init(script: Script, scriptPath: String, plan: LoadPlan, runID: String, outDirectory: String) {
            self.script = script
            self.scriptPath = scriptPath
            self.plan = plan
            self.runID = runID
            self.outDirectory = outDirectory
        }
    }

    /// How a run ended.
    package struct Result: Sendable {
        package var summary: RunSummary
        /// 130 or 143 when SIGINT or SIGTERM stopped the run.
        package var signalExitStatus: Int32?
        /// With ``Settings/mergeShards``: whether the run's merge passed, when this shard wrote it; `nil` when it
        /// did not merge (other shards still running, or the merge failed).
        package var mergedPassed: Bool? = nil

        /// Whether the process should exit as a failed run: the merge's verdict when this shard merged the run;
        /// with `--merge` and no merge here, never for this slice's own thresholds (the run's verdict is the
        /// merge's); otherwise this run's own.
        package func failed(merging: Bool) -> Bool {
            if let mergedPassed { return !mergedPassed }
            return merging ? false : !summary.passed
        }
    }

    package let settings: Settings
    private let console: RunConsole
    /// The loops this run created: shut down when ``run()`` returns or throws.
    package let loopGroups = LoopGroups()
    package let signals: SignalWatch
    /// The parts as they start, for whoever needs to know (tests among them).
    package let server = Ready<ReferenceServer>()
    package let endpoint = Ready<MetricsEndpoint>()
    package let swarm = Ready<Swarm>()
    private let outcome = Ready<SwarmService.Finish>()
    private let watch = Ready<SoakWatch>()
    private let summary = Ready<RunSummary>()
    private let merged = Ready<Bool>()
    private let handle = GroupHandle()

    package init(_ settings: Settings, console: RunConsole) {
        self.settings = settings
        self.console = console
        signals = SignalWatch { name in
            console.note("\(name): stopping the run, pushing the final metrics and writing the summary")
        }
    }

    /// Runs every part until the plan ends or a graceful shutdown, then writes the results and returns the summary.
    package func run() async throws -> Result {
        let groups = (bots: await loopGroups.make(threads: settings.loops), side: await loopGroups.make(threads: 1))
        do {
            let group = try makeGroup(bots: groups.bots, side: groups.side)
            try await handle.run(group)
        } catch {
            await release()
            throw error
        }
        await release()
        guard let summary = summary.current else {
            throw RunError.input("the run stopped before any bot started: there are no results to write")
        }
        return Result(summary: summary, signalExitStatus: signals.exitStatus, mergedPassed: merged.current)
    }

    /// Lets go of the swarm (its loop threads end with it) once nothing collects its metrics, and ends the loops.
    private func release() async {
        swarm.release()
        watch.release()
        await loopGroups.shutDown()
    }

    /// Stops the run as SIGTERM would: the bots stop, the final push, the report, then the listeners.
    package func triggerGracefulShutdown() async {
        await handle.triggerGracefulShutdown()
    }

    private func makeGroup(bots: any EventLoopGroup, side: any EventLoopGroup) throws -> ServiceGroup {
        let settings = self.settings
        let console = self.console
        let metrics = RunMetrics()
        let exporter = try settings.makeExporter(metrics)
        var parts = [CommandGroup.part(signals, "signals")]

        var serverService: ReferenceServerService?
        if settings.target == nil {
            var configuration = settings.embeddedServer
            // The embedded server plays the catalogue's games: one registration serves both sides.
            configuration.games = settings.catalogue.games
            // The embedded server's series carry this run's labels, so dashboards show it beside its bots.
            configuration.metricLabels = ["run": settings.runID, "shard": settings.plan.shard.description]
            var service = ReferenceServerService(configuration: configuration, group: side, started: server)
            service.logger = settings.makeLogger("skirmish.server")
            service.onStart = { server in
                metrics.add(server.metricsSource)
                console.note("embedded server: \(server.addresses.listeningLines.joined(separator: ", "))")
            }
            serverService = service
            parts.append(CommandGroup.part(service, "reference server"))
        }
        let server = self.server
        let embedded = serverService != nil
        let serverStarted: @Sendable () async throws -> Void = {
            if embedded { _ = try await server.value() }
        }

        var endpointService = MetricsEndpointService(
            source: metrics, host: settings.metricsHost, port: settings.metricsPort, group: side,
            linger: settings.metricsLinger, started: endpoint)
        endpointService.after = serverStarted
        parts.append(CommandGroup.part(endpointService, "metrics endpoint"))

        parts.append(CommandGroup.part(RunReport(run: self, metrics: metrics, exporter: exporter), "report"))

        let exporterStarted = Ready<Void>()
        if let exporter {
            var service = ExporterService(exporter)
            service.after = serverStarted
            service.onStart = { exporterStarted.fulfil(()) }
            parts.append(CommandGroup.part(service, "exporter"))
        } else {
            exporterStarted.fulfil(())
        }

        let endpoint = self.endpoint
        let signals = self.signals
        var swarmService = SwarmService(group: bots, started: swarm, finished: outcome) {
            try await signals.armed.value()
            try await exporterStarted.value()
            let url = try await endpoint.value().url
            var targets = settings.target
            if targets == nil { targets = EmbeddedTargets.of(try await server.value()) }
            guard let targets else { throw RunError.input("no target to run against") }
            var configuration = SwarmConfiguration(
                script: settings.script, plan: settings.plan, target: targets.0, seed: settings.seed,
                runID: settings.runID, loops: settings.loops)
            configuration.alternates = targets.1
            configuration.catalogue = settings.catalogue
            let plan = settings.plan
            console.note(
                "\(settings.command) \(settings.runID): \(settings.script.name), \(plan.peakClosedBots) bots peak, "
                    + "\(RunFormat.duration(plan.duration)), shard \(plan.shard.fraction), seed \(settings.seed); "
                    + "metrics at \(url)")
            return configuration
        }
        swarmService.logger = settings.makeLogger("skirmish.swarm")
        // With no server in the process, nothing else in it must keep a bot loop from its sends.
        swarmService.loopsFirst = !embedded
        swarmService.onStart = { swarm in metrics.add(swarm.metricsSource) }
        let stream = settings.stream
        swarmService.progress = { progress in
            stream?.record(progress.snapshot, at: progress.elapsed.seconds)
            console.progress(progress, exporter?.stats.liveStatus)
        }
        swarmService.onEnd = console.progressEnd
        // The plan's end ends the command: the group then stops the other parts gracefully.
        parts.append(
            ServiceGroupConfiguration.ServiceConfiguration(
                service: swarmService, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "swarm"))

        if let soak = settings.soak {
            let configuration = SoakWatch.Configuration(
                policy: soak.policy, interval: soak.interval, outDirectory: settings.outDirectory,
                scriptPath: settings.scriptPath, startedAt: settings.startedAt)
            var service = SoakWatchService(
                swarm: swarm, configuration: configuration, exporterStats: { exporter?.stats }, started: watch)
            service.logger = settings.makeLogger("skirmish.soak")
            service.onStart = {
                console.note(
                    "health checks every \(RunFormat.duration(soak.interval)), flat after "
                        + "\(RunFormat.duration(.seconds(soak.policy.warmUp))); checkpoints in "
                        + "\(settings.outDirectory)/summary.json")
            }
            service.onChange = { verdict in
                console.note(
                    "health: \(verdict.status.rawValue.uppercased()) \(verdict.check.rawValue): \(verdict.detail)")
            }
            parts.append(CommandGroup.part(service, "soak watch"))
        }
        return CommandGroup.make(parts)
    }

    /// The final steps, run when the group stops it: after the bots stopped and the final push, before the last
    /// scrape and the server's shutdown.
    private struct RunReport: Service {
        let run: SwarmRun
        let metrics: RunMetrics
        let exporter: Exporter?

        func run() async throws {
            guard await Stopping.wait() == .graceful, let finish = run.outcome.current else { return }
            let outcome = finish.outcome
            let settings = run.settings
            let console = run.console
            // From here /metrics serves the final figures (the embedded server's included, read before it stops).
            let metrics = self.metrics
            let final = Mutex<MetricsSnapshot?>(nil)
            await onOwnThread { final.withLock { $0 = metrics.collect() } }
            let snapshot = final.withLock { $0 } ?? MetricsSnapshot()
            run.endpoint.current?.freeze(snapshot)
            let serverStats = try? await run.server.current?.metricsText()

            var summary = RunSummary(
                outcome: outcome, configuration: finish.configuration, scriptPath: settings.scriptPath,
                startedAt: settings.startedAt, exporter: exporter?.stats)
            summary.server = ServerFigures(snapshot: snapshot)
            if summary.server == nil, let url = settings.serverMetricsURL {
                let scraped = Mutex<Swift.Result<ServerFigures, ServerFigures.ScrapeError>?>(nil)
                await onOwnThread { scraped.withLock { $0 = ServerFigures.scrape(url) } }
                switch scraped.withLock({ $0 }) {
                case .success(let figures): summary.server = figures
                case .failure(let error): console.note("server figures not in the report: \(error)")
                case nil: break
                }
            }
            if let watch = run.watch.current {
                if let error = watch.lastWriteError {
                    console.note("the last checkpoint could not be written: \(error)")
                }
                summary.attach(watch.report(state: outcome.interrupted ? .interrupted : .finished))
            }
            if let baseline = settings.baseline { summary.compare(with: baseline) }
            let streamNotes = settings.stream?.finish(outcome.snapshot, at: outcome.elapsed.seconds) ?? []
            let written =
                try RunOutput.write(
                    summary: summary, outcome: outcome, script: settings.script.text, to: settings.outDirectory,
                    serverMetrics: serverStats)
                + (settings.stream?.paths ?? [])
            console.line(summary.table())
            if let soak = summary.soak {
                console.line("")
                console.line(
                    "health after \(RunFormat.duration(.seconds(soak.elapsedSeconds))), \(soak.checks) checks:")
                for line in soak.lines() { console.line(line) }
            }
            console.line("results: \(written.joined(separator: ", "))")
            for note in streamNotes { console.note(note) }
            if let warning = summary.generatorWarning { console.note(warning) }
            if outcome.interrupted { console.note("stopped early by a signal; the figures cover the run so far") }
            if let aborted = summary.aborted {
                console.note(
                    "stopped early at \(Int(aborted.atSeconds)) s: \(aborted.threshold) failed and has abort_on_fail; "
                        + "the figures cover the run so far")
            }
            if settings.mergeShards,
                let passed = SwarmRun.mergeShards(
                    after: settings.outDirectory, variables: settings.script.variables, console: console)
            {
                run.merged.fulfil(passed)
            }
            run.summary.fulfil(summary)
        }
    }

    /// The last shard out merges: reads every shard folder beside `directory` and, when each has finished, writes
    /// the run's merge into `merged/` beside them. A shard that finishes earlier notes which are still running and
    /// leaves the merge to the last; two finishing at once both write the whole merge, each file renamed into place
    /// from a temporary name of its own (``RunOutput``), so the folder always holds one writer's whole files.
    /// A shard that never finishes leaves the merge to a person (`skirmish merge --allow-missing`).
    /// Returns whether the merged run passed when this shard merged it, `nil` when it did not.
    static func mergeShards(after directory: String, variables: [String: String], console: RunConsole) -> Bool? {
        let parent = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        // The script's variables as this shard read them, which every shard of the run read alike (checked).
        var loader = Catalogue.standard.scriptLoader
        loader.environment = variables
        do {
            let merge = try RunMerge(
                folders: try RunMerge.folders(in: [parent]), loader: loader, allowMissing: true)
            guard merge.missing.isEmpty else {
                console.note(
                    "merge: \(merge.missing.count == 1 ? "shard" : "shards") "
                        + "\(merge.missing.map(String.init).joined(separator: ", ")) "
                        + "\(merge.missing.count == 1 ? "has" : "have") not finished; the last shard to finish merges "
                        + "the run into \(parent)/\(RunMerge.mergedFolder)")
                return nil
            }
            let (summary, snapshot) = merge.merged()
            let out = parent + "/" + RunMerge.mergedFolder
            try RunOutput.write(summary: summary, snapshot: snapshot, script: merge.script.text, to: out)
            console.note(
                "merge: every shard has finished; run \(summary.run) merged into \(out): "
                    + (summary.passed ? "every threshold holds" : "the run FAILED"))
            return summary.passed
        } catch let problem as RunMerge.Problem where problem.unfinished {
            console.note("merge: \(problem) The last shard to finish merges the run.")
        } catch {
            console.note("merge: the run's shards were not merged: \(error)")
        }
        return nil
    }
}

/// The embedded server's addresses as swarm targets.
package enum EmbeddedTargets {
    package static func of(_ server: ReferenceServer) -> (Target, [Transport: Target]) {
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

/// Human formats for durations in notes.
package enum RunFormat {
    package static func duration(_ duration: Duration) -> String {
        let seconds = duration.seconds
        if seconds < 120 { return "\(Int(seconds.rounded())) s" }
        if seconds < 7_200 { return String(format: "%.1f min", seconds / 60) }
        return String(format: "%.1f h", seconds / 3_600)
    }
}
