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
            script = try Catalogue.standard.scriptLoader.load(path: self.script)
        } catch {
            throw InputError(String(describing: error))
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
        try Self.ensureWritable(outDirectory)

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

extension SwarmRun {
    /// Runs to the end and turns the result into the exit status: 130 or 143 after a signal, 99 when a threshold
    /// failed (or stopped the run), 2 when a part could not start.
    func runToExitStatus() async throws {
        let result: Result
        do {
            result = try await run()
        } catch let error as RunError {
            throw InputError(error.description)
        }
        if let status = result.signalExitStatus { throw ExitCode(status) }
        if !result.summary.passed { throw ExitCode(99) }
    }
}
