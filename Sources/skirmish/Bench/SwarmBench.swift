import ArgumentParser
import Foundation
import SkirmishBench
import UnixSignals

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

            allocations: heap allocations per bot-tick on the bots' loop for 500 chasers in steady play (budget: 0). \
            ddnet: the same for 48 DDNet bots (runners and idlers) against a local DDNet-Server (Debian's \
            ddnet-server and ddnet-data; skipped, and said so, when it is not installed).

            Memory per bot = (peak resident set of the swarm process − that of a 4-bot run) ÷ bots. CPU is each \
            process's user + system time over the hold, as a share of one core: a server near 100 % means the \
            server, not the generator, set the limit. Run on an otherwise idle machine (the load average is \
            printed) and build with -c release.
            """
    )

    @Option(help: "Which measurement to run: sustained, idle, allocations, ddnet or all.")
    var part: SwarmBenchmark.Part = .all

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
        var configuration = SwarmBenchmark.Configuration()
        configuration.part = part
        configuration.hold = hold
        configuration.from = from
        configuration.upTo = upTo
        configuration.resolution = resolution
        configuration.idleBots = idleBots
        configuration.idleHold = idleHold
        configuration.botCore = botCore
        configuration.serverCore = serverCore
        configuration.keep = keep
        configuration.realtime = realtime
        let folder = configuration.folder()

        // SIGINT or SIGTERM (Ctrl-C, `timeout`) stops the children too: a pinned server left behind would skew
        // whatever runs next on its core.
        let temporary = keep == nil ? folder : nil
        let watcher = Task.detached {
            for await signal in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                BenchProcess.terminateAll()
                if let temporary { try? FileManager.default.removeItem(at: temporary) }
                Console.note("\(signal == .sigint ? "SIGINT" : "SIGTERM"): stopped the benchmark and its processes")
                Skirmish.exit(afterLogs: ExitCode(signal == .sigint ? 130 : 143))
            }
        }
        defer { watcher.cancel() }
        let result = try await SwarmBenchmark.run(configuration, folder: folder, environment: .skirmish)
        for line in result.lines { print(line) }
    }
}

extension SwarmBenchmark.Part: ExpressibleByArgument {}
