import ArgumentParser
import Foundation
import SkirmishNet
import SkirmishRun
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

extension RunOptions {
    /// The run these options describe, checked before anything starts: the script loads and plans, the target
    /// parses, the results folder can be written and the collectors are valid. Bad input throws ``InputError``.
    func settings(command: String) throws -> SwarmRun.Settings {
        let started = Date()
        let script: Script
        do {
            var loader = Catalogue.standard.scriptLoader
            loader.environment = ScriptVariable.environment(loader.environment, adding: variables)
            script = try loader.load(path: self.script)
        } catch {
            throw InputError(String(describing: error))
        }
        let series = Catalogue.standard.plannedSeries(of: script)
        guard series <= Catalogue.maxSeries else {
            throw InputError(
                "\(self.script): its \(script.personas.count) personas would create \(series) metric series in each "
                    + "process, above the limit of \(Catalogue.maxSeries): merge personas that differ only in a tag, or "
                    + "split the script")
        }
        let plan = try makePlan(script)
        let baseline = try self.baseline.map { try SummaryFile.load($0, role: "baseline") }
        let runID = givenRunID() ?? RunID.make(script: script.name, at: started)
        let outDirectory = out ?? "skirmish-out/\(runID)"
        if let note = try Self.limitNote(plan) { Console.note(note) }
        var targets: (Target, [Transport: Target])?
        if let text = target {
            do {
                targets = (try Target(parsing: text), [:])
            } catch {
                throw InputError("--target \(text): \(error)")
            }
            if let transports = Catalogue.standard.description(of: script.protocolName)?.transports,
                let chosen = targets?.0.transport, !transports.contains(chosen)
            {
                throw InputError(
                    "--target \(text): protocol `\(script.protocolName)` does not run over \(chosen.rawValue); it runs "
                        + "over \(transports.map(\.rawValue).sorted().joined(separator: ", "))")
            }
        } else if script.protocolName != Catalogue.standard.defaultProtocol,
            script.personas.contains(where: { $0.target == nil })
        {
            throw InputError(
                "\(self.script) speaks `\(script.protocolName)`, and the embedded server speaks only "
                    + "`\(Catalogue.standard.defaultProtocol)`: give the server to test with --target "
                    + "udp://HOST:PORT, or a `target:` on every persona")
        }
        if mergeShards, plan.shard.count < 2 {
            throw InputError(
                "--merge: this run is not sharded, so there is nothing to merge; give --shard i/n (or run it as a "
                    + "Kubernetes Indexed Job), or leave --merge out")
        }
        try Self.ensureWritable(outDirectory, overwrite: overwrite)
        let stream = try openStream(script: script, plan: plan, runID: runID, startedAt: started)

        var settings = SwarmRun.Settings(
            script: script, scriptPath: self.script, plan: plan, runID: runID, outDirectory: outDirectory)
        settings.command = command
        settings.seed = seed
        settings.loops = loops
        settings.target = targets
        settings.startedAt = started
        let push = self.push
        let shard = plan.shard
        let logs = self.logs
        settings.makeLogger = { label in logs.logger(label, run: runID) }
        let exporterLogger = logs.logger("skirmish.exporter", run: runID)
        settings.makeExporter = { source in
            try push.makeExporter(source: source, runID: runID, shard: shard, logger: exporterLogger)
        }
        settings.metricsHost = metrics.host
        settings.metricsPort = metrics.port
        settings.metricsLinger = .seconds(metricsLinger)
        settings.serverMetricsURL = serverMetrics
        settings.baseline = baseline
        settings.stream = stream
        settings.mergeShards = mergeShards
        return settings
    }

    /// The console a run writes to: the table on stdout, notes and the progress line on stderr.
    var console: RunConsole {
        let progress = ProgressPrinter(plain: plainProgress)
        return RunConsole(
            line: { Console.line($0) }, note: { Console.note($0) }, progress: { progress.update($0, status: $1) },
            progressEnd: { progress.finish() })
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
            do {
                shard = try Shard.fromEnvironment() ?? .whole
            } catch {
                throw InputError(error.description)
            }
        }
        do {
            return try LoadPlan(script: script, overrides: overrides, shard: shard)
        } catch {
            throw InputError("\(self.script): \(error)")
        }
    }

    /// The `--out-stream` and `--out-csv` files, opened (and emptied) before the run starts; a file that already
    /// holds something is refused without `--overwrite`.
    private func openStream(script: Script, plan: LoadPlan, runID: String, startedAt: Date) throws -> RunStream? {
        guard outStream != nil || outCsv != nil else { return nil }
        for (option, path) in [("--out-stream", outStream), ("--out-csv", outCsv)] {
            guard let path else { continue }
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            if size > 0, !overwrite {
                throw InputError(
                    "\(option) \(path) already holds \(size) bytes: give another file, or --overwrite to replace it")
            }
        }
        if let json = outStream, let csv = outCsv,
            URL(fileURLWithPath: json).standardizedFileURL.resolvingSymlinksInPath()
                == URL(fileURLWithPath: csv).standardizedFileURL.resolvingSymlinksInPath()
        {
            throw InputError("--out-stream and --out-csv name the same file \(json): give each its own")
        }
        do {
            return try RunStream(
                json: outStream, csv: outCsv, script: script, run: runID, shard: plan.shard, startedAt: startedAt)
        } catch {
            throw InputError("cannot write \(error): choose a file in a folder you can write to")
        }
    }

    /// The files that say a folder already holds a run's results.
    static let resultFiles = ["summary.json", "metrics.om", "metrics.json", "script.yaml", "report.html"]

    /// Checks before anything starts that the results folder holds no earlier run (unless `overwrite`) and can be
    /// written (creating it), so a run never plays for hours to fail at its last step or replace last night's.
    private static func ensureWritable(_ directory: String, overwrite: Bool) throws {
        let found = resultFiles.filter { FileManager.default.fileExists(atPath: directory + "/" + $0) }
        if !overwrite, !found.isEmpty {
            let run = (try? RunSummary.load(path: directory + "/summary.json", role: "earlier")).map {
                " (run \($0.run))"
            }
            throw InputError(
                "--out \(directory) already holds a run\(run ?? "") (\(found.joined(separator: ", "))): give another "
                    + "folder, a new --run-id (the default folder is skirmish-out/<run id>), or --overwrite to "
                    + "replace it")
        }
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

extension SwarmRun {
    /// Runs to the end and turns the result into the exit status: 130 or 143 after a signal, 99 when a threshold
    /// failed (or stopped the run; with `--merge`, the merged run's thresholds), 2 when a part could not start.
    func runToExitStatus() async throws {
        let result: Result
        do {
            result = try await run()
        } catch let error as RunError {
            throw InputError(error.description)
        }
        if let status = result.signalExitStatus { throw ExitCode(status) }
        if result.failed(merging: settings.mergeShards) { throw ExitCode(99) }
    }
}
