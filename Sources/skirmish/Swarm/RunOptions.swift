import ArgumentParser
import NIOCore
import NIOPosix

/// The options every run of a script takes: `skirmish swarm` and `skirmish soak` share them.
struct RunOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The swarm script to run.", valueName: "script.yaml"))
    var script: String

    @Option(help: "Peak concurrent bots: scales every ramp of the profile to this peak.")
    var bots: Int?

    @Option(
        help: ArgumentHelp(
            "Run length (e.g. 30s, 5m, 8h): stretches the hold and arrival stages. Default: the script's.",
            valueName: "duration"))
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
}
