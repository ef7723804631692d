import ArgumentParser
import SkirmishBench
import SkirmishWire

/// `skirmish bench enet`: heap allocations per bot-tick of ENet bots against an ENet echo server.
struct ENetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enet",
        abstract: "Count heap allocations per bot-tick of ENet bots against an ENet echo server.",
        discussion: """
            Budget (DESIGN §9): 0 heap allocations per bot-tick, for every built-in protocol plug-in. Runs --bots \
            `payload` bots on one event loop, each sending 30 messages a second (half reliable on channel 0, half \
            unreliable on channel 1) to --target, which must echo each packet to its sender on the same channel with \
            the same flags; every echo is matched, timed and checked. The ENet tests' libenet server does: build it \
            with `gcc -O1 -o enet-peer Tests/SkirmishENetTests/Peer/enet_peer.c -lenet`, start it with \
            `./enet-peer --detached --peers 1000 --seconds 120` and pass the port it prints. Exits 1 when a \
            bot-tick allocates.
            """
    )

    @Option(help: ArgumentHelp("The ENet echo server, as udp://host:port.", valueName: "url"))
    var target: String

    @Option(help: "ENet bots on the loop.")
    var bots = 200

    @Option(help: "Seconds of play before the window.")
    var warmup = 4

    @Option(help: "Seconds the allocations are counted over.")
    var window = 4

    func validate() throws {
        guard bots > 0, warmup >= 1, window >= 1 else {
            throw ValidationError("--bots must be positive, --warmup and --window at least 1 second")
        }
        guard (try? Target(parsing: target))?.transport == .udp else {
            throw ValidationError("--target \(target): give the ENet server as udp://host:port")
        }
    }

    func run() async throws {
        let result = try await ENetAllocationProbe.run(
            bots: bots, target: try Target(parsing: target), warmup: warmup, window: window, environment: .skirmish)
        print(result.line)
        if result.botTicks == 0 || result.perBotTickExcludingReads >= 0.005 { throw ExitCode(1) }
    }
}
