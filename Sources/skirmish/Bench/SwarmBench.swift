import ArgumentParser
import Foundation
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry

/// `skirmish bench swarm`: how many 30 Hz Puck bots one core drives, and how many idle bots one process holds.
struct SwarmBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swarm",
        abstract: "Find how many 30 Hz Puck bots one core drives and how many idle bots one process holds.",
        discussion: """
            Runs the real thing: `skirmish serve` pinned to one core (--server-core) and `skirmish swarm` pinned \
            to another (--bot-core, one event loop), both with `taskset`, talking UDP over loopback.

            sustained: chasers sending inputs at 30 Hz and playing match after match. A bounded search over bot \
            counts finds the most that pass all of: ≥ 99 % of inputs sent within 5 ms of schedule, tick lateness \
            p99 < 5 ms, and ≥ 99 % of the packets the server sent received. Budget (DESIGN §9): at least as many per \
            core as the plain C client of shared/peers (one socket per bot, epoll) measured on the same machine in \
            the same hour. Each trial prints the swarm's CPU per bot-tick in µs; the search says which process set \
            the limit.

            idle: bots that hold a seat at a 4-seat Snap table and only keep the connection alive (a Ping a \
            second each way). Default: as many as the open-file hard limit allows, less 1,000 for headroom \
            (≈ 19,000 under a 20,000 limit). Budget: single-digit KiB of resident memory per bot.

            Memory per bot = (peak resident set of the swarm process − that of a 4-bot run) ÷ bots. CPU is each \
            process's user + system time over the hold, as a share of one core: a server near 100 % means the \
            server, not the generator, set the limit. Run on an otherwise idle machine (the load average is \
            printed) and build with -c release.
            """
    )

    enum Part: String, ExpressibleByArgument, CaseIterable, Sendable {
        case sustained, idle, allocations, all
    }

    @Option(help: "Which measurement to run: sustained, idle, allocations or all.")
    var part: Part = .all

    @Option(help: "Seconds each sustained trial holds its bots after the ramp.")
    var hold = 10

    @Option(help: "The first bot count the sustained search tries.")
    var from = 1_000

    @Option(help: "The largest bot count the sustained search tries.")
    var upTo = 8_000

    @Option(help: "The search stops when the best pass and the first failure are this close.")
    var resolution = 250

    @Option(help: "Idle bots to hold (default: the open-file hard limit less 1,000).")
    var idleBots: Int?

    @Option(help: "Seconds the idle bots are held after the ramp.")
    var idleHold = 20

    @Option(help: "CPU core for the swarm process.")
    var botCore = 0

    @Option(help: "CPU core for the server process.")
    var serverCore = 1

    @Option(help: ArgumentHelp("Keep every trial's script, logs and results here.", valueName: "dir"))
    var keep: String?

    @Flag(
        help: """
            Run both processes under the real-time round-robin scheduler (chrt -r 10; needs root or CAP_SYS_NICE), so \
            other work on a shared machine cannot preempt them; that work gets what is left (at least 5 % of each core).
            """)
    var realtime = false

    func validate() throws {
        guard hold >= 2 else { throw ValidationError("--hold must be at least 2 seconds; got \(hold).") }
        guard idleHold >= 2 else { throw ValidationError("--idle-hold must be at least 2 seconds; got \(idleHold).") }
        guard from >= 2, upTo >= from else {
            throw ValidationError("--from must be at least 2 and --up-to at least --from; got \(from) and \(upTo).")
        }
        guard resolution >= 2 else { throw ValidationError("--resolution must be at least 2; got \(resolution).") }
        if let idleBots, idleBots < 4 { throw ValidationError("--idle-bots must be at least 4; got \(idleBots).") }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard (0..<cores).contains(botCore), (0..<cores).contains(serverCore) else {
            throw ValidationError("--bot-core and --server-core must name cores 0…\(cores - 1).")
        }
    }

    func run() async throws {
        let folder = URL(
            fileURLWithPath: keep ?? NSTemporaryDirectory()
                + "skirmish-bench-swarm-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if keep == nil { try? FileManager.default.removeItem(at: folder) } }

        // SIGINT or SIGTERM (Ctrl-C, `timeout`) stops the children too: a pinned server left behind would skew
        // whatever runs next on its core.
        let temporary = keep == nil ? folder : nil
        let watcher = Task.detached {
            guard let name = await Signals.firstTermination() else { return }
            BenchProcess.terminateAll()
            if let temporary { try? FileManager.default.removeItem(at: temporary) }
            Console.note("\(name): stopped the benchmark and its server and swarm processes")
            Self.exit(withError: ExitCode(130))
        }
        defer { watcher.cancel() }
        let server = try BenchServer.start(core: serverCore, realtime: realtime, folder: folder)
        defer { server.process.process.terminate() }
        let pinning =
            server.process.pinned
            ? "swarm pinned to core \(botCore), `skirmish serve` to core \(serverCore) (taskset)"
                + (realtime ? ", both at real-time priority (chrt -r 10)" : "")
            : "taskset not found: processes NOT pinned, figures are for the whole machine"
        print("swarm bench: \(pinning); load average \(fixed(MachineCounters.loadAverage(), 2)) at the start")
        print("")

        let runner = TrialRunner(server: server, folder: folder, botCore: botCore, realtime: realtime)
        let base = try await runner.run(.baseline, bots: 4, hold: 2)
        let baseKiB = base.peakKiB

        var results: [String] = []
        if part == .allocations || part == .all {
            print("allocations: 500 chasers against an in-process server; heap allocations on the bots' loop")
            let probe = try await HotPathProbe.run(bots: 500)
            let perMatch = probe.matches > 0 ? Double(probe.allocations) / Double(probe.matches) : 0
            let line =
                "allocations: \(probe.allocations) on the bots' loop over \(probe.botTicks) bot-ticks and "
                + "\(probe.snapshots) snapshots in \(fixed(probe.seconds, 1)) s: "
                + "\(fixed(probe.perBotTick, 3)) per bot-tick; "
                + "\(fixed(probe.perBotTickExcludingReads, 4)) once the metric reads (\(probe.perMetricsRead) allocations "
                + "each, one a second) are set apart; \(probe.matches) matches started in the window"
                + (probe.matches > 0 ? " (at most \(fixed(perMatch, 0)) allocations each)" : "")
            print(line)
            print("")
            results.append(line)
            if part == .allocations {
                await server.process.stop()
                for line in results { print(line) }
                return
            }
        }
        if part != .idle {
            print("sustained: 30 Hz Puck chasers, \(hold) s hold per trial")
            print(Trial.header)
            var best: Trial?
            var failed: Trial?
            var bots = from
            for _ in 0..<10 {
                let trial = try await runner.run(.sustained, bots: bots, hold: hold)
                print(trial.row(baseKiB: baseKiB))
                if trial.passed { best = trial } else { failed = trial }
                guard let next = Self.nextCount(best: best?.bots, failed: failed?.bots, upTo: upTo, step: resolution)
                else { break }
                bots = next
            }
            if let best {
                results.append(
                    "sustained: \(best.bots) bots at 30 Hz on one core (budget: at least the C client of "
                        + "shared/peers on the same machine in the same hour), "
                        + "\(fixed(best.microsecondsPerBotTick, 2)) µs of swarm CPU per bot-tick, "
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
            print("")
        }
        if part != .sustained {
            let count = idleBots ?? max(4, MachineCounters.openFileHardLimit() - 1_000)
            print("idle: \(count) bots at 4-seat Snap tables, keepalive only, \(idleHold) s hold")
            print(Trial.header)
            let trial = try await runner.run(.idle, bots: count, hold: idleHold)
            print(trial.row(baseKiB: baseKiB))
            results.append(
                "idle: \(count) bots "
                    + (trial.passed ? "held at once, all connected" : "NOT all held (\(trial.limit))") + ", "
                    + "\(fixed(trial.kibPerBot(baseKiB: baseKiB), 1)) KiB per bot (budget: single-digit KiB)")
            print("")
        }
        await server.process.stop()
        for line in results { print(line) }
        print("load average \(fixed(MachineCounters.loadAverage(), 2)) at the end")
        if keep != nil { print("trial files kept in \(folder.path)") }
    }

    /// The next bot count of a bounded search: up by half while everything passes, then bisect between the best
    /// pass and the first failure until they are `step` apart; `nil` when done.
    static func nextCount(best: Int?, failed: Int?, upTo: Int, step: Int) -> Int? {
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

/// `skirmish serve` as a benchmark's opponent, with its addresses.
struct BenchServer {
    let process: BenchProcess
    let udpPort: Int
    let httpPort: Int

    static func start(core: Int, realtime: Bool, folder: URL) throws -> BenchServer {
        let process = try BenchProcess(
            name: "skirmish serve",
            arguments: [
                "serve", "--udp", "127.0.0.1:0", "--tcp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                "--max-sessions", "40000", "--max-matches", "20000", "--no-host-limits",
            ], core: core, realtime: realtime, captureOutput: true, log: folder.appendingPathComponent("serve.log"))
        let udp = try process.readLine(prefix: "listening udp://", timeout: .seconds(30))
        _ = try process.readLine(prefix: "listening tcp://", timeout: .seconds(5))
        let http = try process.readLine(prefix: "listening http://", timeout: .seconds(5))
        func port(_ line: String) throws -> Int {
            guard let text = line.split(separator: ":").last, let port = Int(text) else {
                throw BenchError("cannot read a port from `\(line)`")
            }
            return port
        }
        return BenchServer(process: process, udpPort: try port(udp), httpPort: try port(http))
    }

    func metrics() throws -> PrometheusText { try PrometheusText.fetch(port: httpPort) }
}

/// One run of `skirmish swarm` against the bench server, and what it measured.
struct Trial {
    enum Kind: String { case baseline, sustained, idle }

    var kind: Kind
    var bots: Int
    /// `nil` when the swarm wrote none (it had to be killed).
    var summary: RunSummary?
    /// Whether the swarm ended by itself within its planned time plus a margin.
    var finishedInTime: Bool
    /// Packets the server sent during the trial (its own counter).
    var serverSent: Double
    var rateLimited: Double
    var serverLateTicks: Double
    var serverSessionsPeak: Int
    var kernelDrops: UInt64
    /// Of those, dropped at the server's own socket (inputs the server never read).
    var serverSocketDrops: UInt64
    /// Share of one core over the hold.
    var swarmCPU: Double
    var serverCPU: Double
    var peakKiB: Int
    var exitStatus: Int32

    var onTime: Double? { summary?.onTimeSendRate }
    var latenessP99: Double? { summary?.latency.tickLateness.p99 }
    /// Replies received: the smaller of Pings answered by a Pong and snapshots arrived (the gaps in their numbering
    /// count as lost), both as the bots saw them.
    var replies: Double {
        guard let summary else { return 0 }
        let packets = summary.packets
        let heard = packets.received + packets.lost
        let arrived = heard == 0 ? 0 : Double(packets.received) / Double(heard)
        return min(summary.replyRate ?? 0, arrived)
    }
    /// Packets the bots received ÷ packets the server sent: also counts what was still in flight to a bot that had
    /// just left its match, so it is shown, not judged.
    var delivered: Double {
        guard let summary, serverSent > 0 else { return 0 }
        return min(1, Double(summary.packets.received) / serverSent)
    }
    var errors: UInt64 { summary?.errors.values.reduce(0, +) ?? 0 }
    /// The most bots connected at once, from the swarm's once-a-second timeline.
    var connectedPeak: Int { Int(summary?.timeline?.points.map(\.bots).max() ?? 0) }
    /// Bots one whole core would drive at this trial's cost per bot.
    var botsPerCore: Double { swarmCPU > 0.01 ? Double(bots) / swarmCPU : 0 }

    /// The swarm's CPU time per bot-tick (one 30 Hz input out, one snapshot in, and everything around them), in µs.
    var microsecondsPerBotTick: Double { bots > 0 ? swarmCPU * 1e6 / (Double(bots) * 30) : 0 }

    /// Which process ran out of CPU first: the one above 90 % of its core (the swarm when both are).
    var saturated: String? {
        if swarmCPU >= 0.9 { return "the swarm (\(Int((swarmCPU * 100).rounded())) % of its core)" }
        if serverCPU >= 0.9 { return "the server (\(Int((serverCPU * 100).rounded())) % of its core)" }
        return nil
    }

    /// What failed, in words; empty when the trial passed.
    var limit: String {
        var reasons: [String] = []
        switch kind {
        case .sustained:
            if (onTime ?? 0) < 0.99 { reasons.append("on-time sends \(percent(onTime))") }
            if (latenessP99 ?? 1) >= 0.005 { reasons.append("lateness p99 \(milliseconds(latenessP99))") }
            if replies < 0.99 { reasons.append("replies \(percent(replies))") }
        case .idle, .baseline:
            if connectedPeak < bots { reasons.append("at most \(connectedPeak) connected at once") }
        }
        if let summary, summary.handshakes.failed > 0 {
            reasons.append("\(summary.handshakes.failed) handshakes failed")
        }
        if Double(errors) > Double(bots) / 1_000 { reasons.append("\(errors) errors") }
        if let summary, summary.handshakes.succeeded < UInt64(bots) {
            reasons.append("\(summary.handshakes.succeeded) handshakes")
        }
        if !finishedInTime { reasons.append("the swarm did not stop on time and was stopped by a signal") }
        if summary == nil { reasons.append("no summary") }
        if ![0, 99].contains(exitStatus) { reasons.append("exit status \(exitStatus)") }
        return reasons.joined(separator: ", ")
    }

    var passed: Bool { limit.isEmpty }

    func kibPerBot(baseKiB: Int) -> Double { Double(max(0, peakKiB - baseKiB)) / Double(max(bots, 1)) }

    static let header =
        pad("bots", 7, left: true) + pad("on time", 9, left: true) + pad("late p99", 10, left: true)
        + pad("replies", 9, left: true) + pad("delivered", 10, left: true) + pad("swarm cpu", 10, left: true)
        + pad("bots/core", 10, left: true) + pad("µs/tick", 8, left: true) + pad("server cpu", 11, left: true)
        + pad("RSS MiB", 9, left: true) + pad("KiB/bot", 8, left: true) + "  verdict"

    func row(baseKiB: Int) -> String {
        var notes: [String] = []
        if let summary, errors > 0 {
            notes.append("errors: " + summary.errors.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if kernelDrops > 0 {
            notes.append("kernel dropped \(kernelDrops) datagrams machine-wide, \(serverSocketDrops) at the server")
        }
        if rateLimited > 0 { notes.append("server rate-limited \(Int(rateLimited))") }
        if serverLateTicks > 0 { notes.append("server fell behind \(Int(serverLateTicks)) ticks") }
        return pad("\(bots)", 7, left: true) + pad(percent(onTime), 9, left: true)
            + pad(milliseconds(latenessP99), 10, left: true) + pad(percent(replies), 9, left: true)
            + pad(percent(delivered), 10, left: true)
            + pad("\(Int((swarmCPU * 100).rounded())) %", 10, left: true)
            + pad("\(Int(botsPerCore.rounded()))", 10, left: true)
            + pad(fixed(microsecondsPerBotTick, 2), 8, left: true)
            + pad("\(Int((serverCPU * 100).rounded())) %", 11, left: true)
            + pad(fixed(Double(peakKiB) / 1_024, 1), 9, left: true)
            + pad(fixed(kibPerBot(baseKiB: baseKiB), 2), 8, left: true)
            + "  " + (passed ? "pass" : "FAIL: \(limit)")
            + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
    }

    private func percent(_ value: Double?) -> String { value.map { fixed($0 * 100, 2) + "%" } ?? "—" }
    private func milliseconds(_ value: Double?) -> String { value.map { fixed($0 * 1_000, 2) + " ms" } ?? "—" }
}

/// Runs trials one after another against one server.
struct TrialRunner {
    let server: BenchServer
    let folder: URL
    let botCore: Int
    let realtime: Bool

    func run(_ kind: Trial.Kind, bots: Int, hold: Int) async throws -> Trial {
        let ramp = max(3, (bots + 999) / 1_000)
        let persona =
            switch kind {
            case .sustained, .baseline:
                "{name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 30hz, "
                    + "steps: [{play: until_match_over}, {repeat: true}]}"
            case .idle:
                "{name: idle, weight: 1, game: snap, seats: 4, behavior: idle}"
            }
        let name = "\(kind.rawValue)-\(bots)"
        let script = folder.appendingPathComponent("\(name).yaml")
        try """
        name: bench-\(kind.rawValue)
        profile: [{ramp: {to: \(bots), over: \(ramp)s}}, {hold: {for: \(hold)s}}]
        personas: [\(persona)]
        """.write(to: script, atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent(name)

        let before = try server.metrics()
        let dropsBefore = UDPKernelCounters.receiveBufferErrors()
        let serverDropsBefore = UDPKernelCounters.socketDrops(localPort: server.udpPort)
        let swarm = try BenchProcess(
            name: "skirmish swarm",
            arguments: [
                "swarm", script.path, "--target", "udp://127.0.0.1:\(server.udpPort)", "--loops", "1", "--out",
                out.path, "--plain-progress", "--seed", "1",
            ], core: botCore, realtime: realtime, captureOutput: false,
            log: folder.appendingPathComponent("\(name).log"))
        let started = ContinuousClock.now
        let holdStart = started + .seconds(ramp) + .milliseconds(500)
        let holdEnd = started + .seconds(ramp + hold)
        var swarmCPU: (start: Double, end: Double)?
        var serverCPU: (start: Double, end: Double)?
        var peakKiB = 0
        var sessionsPeak = 0
        var lastSessionsPoll = started
        let limit = started + .seconds(ramp + hold + 90)
        while swarm.isRunning, ContinuousClock.now < limit {
            try await Task.sleep(for: .milliseconds(200))
            let now = ContinuousClock.now
            peakKiB = max(peakKiB, swarm.statusKiB("VmHWM") ?? 0)
            if now >= holdStart, swarmCPU == nil, let swarmNow = swarm.cpuSeconds(),
                let serverNow = server.process.cpuSeconds()
            {
                swarmCPU = (swarmNow, swarmNow)
                serverCPU = (serverNow, serverNow)
            }
            if now >= holdStart, now <= holdEnd {
                if let swarmNow = swarm.cpuSeconds() { swarmCPU?.end = swarmNow }
                if let serverNow = server.process.cpuSeconds() { serverCPU?.end = serverNow }
                if now - lastSessionsPoll >= .seconds(1) {
                    lastSessionsPoll = now
                    let sessions = try? server.metrics().sum("skirmish_server_sessions")
                    sessionsPeak = max(sessionsPeak, Int(sessions ?? 0))
                }
            }
        }
        let finishedInTime = !swarm.isRunning
        // A swarm that cannot keep up may not stop on its own: SIGTERM makes it stop and write its summary.
        if !finishedInTime { await swarm.stop(grace: .seconds(30)) }
        swarm.process.waitUntilExit()
        let after = try server.metrics()
        let summary = (try? Data(contentsOf: out.appendingPathComponent("summary.json"))).flatMap {
            try? JSONDecoder().decode(RunSummary.self, from: $0)
        }
        let holdSeconds = Double(hold) - 0.5
        func share(_ cpu: (start: Double, end: Double)?) -> Double {
            cpu.map { ($0.end - $0.start) / holdSeconds } ?? 0
        }
        func delta(_ name: String, _ labels: [String] = []) -> Double {
            after.sum(name, labels: labels) - before.sum(name, labels: labels)
        }
        return Trial(
            kind: kind, bots: bots, summary: summary, finishedInTime: finishedInTime,
            serverSent: delta("skirmish_server_packets_sent_total"),
            rateLimited: delta("skirmish_server_rejected_packets_total", ["reason=\"rate_limited\""]),
            serverLateTicks: delta("skirmish_server_late_ticks_total"), serverSessionsPeak: sessionsPeak,
            kernelDrops: UDPKernelCounters.receiveBufferErrors() &- dropsBefore,
            serverSocketDrops: UDPKernelCounters.socketDrops(localPort: server.udpPort) &- serverDropsBefore,
            swarmCPU: share(swarmCPU),
            serverCPU: share(serverCPU), peakKiB: peakKiB, exitStatus: swarm.process.terminationStatus)
    }
}
