import Foundation
import SkirmishTelemetry

/// `skirmish bench swarm`: how many 30 Hz Puck bots one core drives, and how many idle bots one process holds.
package enum SwarmBenchmark {
    package enum Part: String, CaseIterable, Sendable {
        case sustained, idle, allocations, ddnet, all
    }

    package struct Configuration: Sendable {
        package var part: Part = .all
        /// Seconds each sustained trial holds its bots after the ramp.
        package var hold = 10
        /// The first bot count the sustained search tries.
        package var from = 1_000
        /// The largest bot count the sustained search tries.
        package var upTo = 8_000
        /// The search stops when the best pass and the first failure are this close.
        package var resolution = 250
        /// Idle bots to hold (default: the open-file hard limit less 1,000).
        package var idleBots: Int?
        /// Seconds the idle bots are held after the ramp.
        package var idleHold = 20
        package var botCore = 0
        package var serverCore = 1
        /// Where every trial's script, logs and results are kept; `nil` for a temporary folder removed at the end.
        package var keep: String?
        /// Both processes under the real-time round-robin scheduler (`chrt -r 10`).
        package var realtime = false

        package init() {}

        /// The folder the trials write to: `keep`, or a fresh one under the temporary directory.
        package func folder() -> URL {
            URL(
                fileURLWithPath: keep ?? NSTemporaryDirectory()
                    + "skirmish-bench-swarm-\(UInt32.random(in: 0...UInt32.max))")
        }
    }

    package struct Result: Sendable {
        /// The closing lines, one per part run.
        package var results: [String]
        /// The load average at the end; `nil` when only the allocations part ran.
        package var endLoadAverage: Double?
        /// The kept folder, when `keep` named one.
        package var keptFolder: String?

        package var lines: [String] {
            var lines = results
            if let endLoadAverage { lines.append("load average \(fixed(endLoadAverage, 2)) at the end") }
            if let keptFolder { lines.append("trial files kept in \(keptFolder)") }
            return lines
        }
    }

    /// Starts `skirmish serve`, runs the parts asked for against it with `skirmish swarm` processes (each trial's
    /// row printed as it ends), and stops the server.
    package static func run(
        _ configuration: Configuration, folder: URL, environment: BenchEnvironment
    ) async throws -> Result {
        let output = environment.output
        if configuration.part == .ddnet {
            // Against a DDNet-Server of its own, in-process: `skirmish serve` and the trials are not needed.
            let line = try await DDNetHotPathProbe.line(environment: environment)
            output(line)
            return Result(results: [line], endLoadAverage: nil, keptFolder: nil)
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if configuration.keep == nil { try? FileManager.default.removeItem(at: folder) } }
        let server = try BenchServer.start(
            core: configuration.serverCore, realtime: configuration.realtime, folder: folder)
        defer { server.process.process.terminate() }
        let pinning =
            server.process.pinned
            ? "swarm pinned to core \(configuration.botCore), `skirmish serve` to core \(configuration.serverCore) (taskset)"
                + (configuration.realtime ? ", both at real-time priority (chrt -r 10)" : "")
            : "taskset not found: processes NOT pinned, figures are for the whole machine"
        output("swarm bench: \(pinning); load average \(fixed(MachineCounters.loadAverage(), 2)) at the start")
        output("")

        let runner = TrialRunner(
            server: server, folder: folder, botCore: configuration.botCore, realtime: configuration.realtime)
        let base = try await runner.run(.baseline, bots: 4, hold: 2)
        let baseKiB = base.peakKiB

        var results: [String] = []
        let part = configuration.part
        if part == .allocations || part == .all {
            output("allocations: 500 chasers against an in-process server; heap allocations on the bots' loop")
            let probe = try await HotPathProbe.run(bots: 500, environment: environment)
            let line = allocationsLine(probe)
            output(line)
            output("")
            results.append(line)
            if part == .all {
                let ddnet = try await DDNetHotPathProbe.line(environment: environment)
                output(ddnet)
                output("")
                results.append(ddnet)
            }
            if part == .allocations {
                await server.process.stop()
                return Result(results: results, endLoadAverage: nil, keptFolder: nil)
            }
        }
        if part != .idle {
            output("sustained: 30 Hz Puck chasers, \(configuration.hold) s hold per trial")
            output(Trial.header)
            var best: Trial?
            var failed: Trial?
            var bots = configuration.from
            for _ in 0..<10 {
                let trial = try await runner.run(.sustained, bots: bots, hold: configuration.hold)
                output(trial.row(baseKiB: baseKiB))
                if trial.passed { best = trial } else { failed = trial }
                guard
                    let next = Self.nextCount(
                        best: best?.bots, failed: failed?.bots, upTo: configuration.upTo,
                        step: configuration.resolution)
                else { break }
                bots = next
            }
            results += sustainedLines(best: best, failed: failed, baseKiB: baseKiB, upTo: configuration.upTo)
            output("")
        }
        if part != .sustained {
            let count = configuration.idleBots ?? max(4, MachineCounters.openFileHardLimit() - 1_000)
            output("idle: \(count) bots at 4-seat Snap tables, keepalive only, \(configuration.idleHold) s hold")
            output(Trial.header)
            let trial = try await runner.run(.idle, bots: count, hold: configuration.idleHold)
            output(trial.row(baseKiB: baseKiB))
            results.append(
                "idle: \(count) bots "
                    + (trial.passed ? "held at once, all connected" : "NOT all held (\(trial.limit))") + ", "
                    + "\(fixed(trial.kibPerBot(baseKiB: baseKiB), 1)) KiB per bot (budget: single-digit KiB)")
            output("")
        }
        await server.process.stop()
        return Result(
            results: results, endLoadAverage: MachineCounters.loadAverage(),
            keptFolder: configuration.keep != nil ? folder.path : nil)
    }

    /// The allocations part's closing line.
    package static func allocationsLine(_ probe: HotPathProbe.Result) -> String {
        let perMatch = probe.matches > 0 ? Double(probe.allocations) / Double(probe.matches) : 0
        return "allocations: \(probe.allocations) on the bots' loop over \(probe.botTicks) bot-ticks and "
            + "\(probe.snapshots) snapshots in \(fixed(probe.seconds, 1)) s: "
            + "\(fixed(probe.perBotTick, 3)) per bot-tick; "
            + "\(fixed(probe.perBotTickExcludingReads, 4)) once the metric reads (\(probe.perMetricsRead) allocations "
            + "each, one a second) are set apart; \(probe.matches) matches started in the window"
            + (probe.matches > 0 ? " (at most \(fixed(perMatch, 0)) allocations each)" : "")
    }

    /// The sustained search's closing lines: the best pass, and which side set the limit at the first failure.
    package static func sustainedLines(best: Trial?, failed: Trial?, baseKiB: Int, upTo: Int) -> [String] {
        var results: [String] = []
        if let best {
            results.append(
                "sustained: \(best.bots) bots at 30 Hz on one core (budget: at least the C client of "
                    + "shared/peers on the same machine in the same hour), "
                    + "\(fixed(best.microsecondsPerBotTick, 2)) µs of swarm CPU per bot-tick "
                    + "(\(fixed(best.kernelMicrosecondsPerBotTick, 2)) µs of it in the kernel), "
                    + "\(fixed(best.kibPerBot(baseKiB: baseKiB), 1)) KiB per bot; "
                    + "limited by \(failed?.limit ?? "--up-to \(upTo)")")
        }
        if let failed {
            results.append(
                "  limit set by "
                    + (failed.saturated
                        ?? "neither process's CPU (swarm \(Int(failed.swarmCPU * 100)) %, server "
                        + "\(Int(failed.serverCPU * 100)) %): other work on the machine, or the kernel")
                    + " at \(failed.bots) bots")
        }
        if best == nil {
            results.append("sustained: no bot count passed; the smallest tried failed by \(failed?.limit ?? "?")")
        }
        return results
    }

    /// The next bot count of a bounded search: up by half while everything passes, then bisect between the best
    /// pass and the first failure until they are `step` apart; `nil` when done.
    package static func nextCount(best: Int?, failed: Int?, upTo: Int, step: Int) -> Int? {
        func rounded(_ value: Int) -> Int { max(step, (value + step / 2) / step * step) }
        switch (best, failed) {
        case (let pass?, nil):
            guard pass < upTo else { return nil }
            return min(upTo, rounded(pass * 3 / 2))
        case (let pass, let fail?):
            let low = pass ?? 0
            guard fail - low > step else { return nil }
            let middle = rounded((low + fail) / 2)
            return middle > low && middle < fail ? middle : nil
        case (nil, nil):
            return nil
        }
    }
}
