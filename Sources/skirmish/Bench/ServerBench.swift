import ArgumentParser
import SkirmishBench

/// `skirmish bench server`: how many Puck matches the reference server runs on one core within the DESIGN budget.
struct ServerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Find the most concurrent Puck matches one server core runs at 60 Hz with snapshot age p99 < 1 tick.",
        discussion: """
            The reference server runs in this process on one event loop pinned to core 0 (UDP only; it reads \
            datagrams with recvmmsg and writes them with sendmmsg). A load generator thread pinned to core 1 plays \
            two clients per match from one UDP socket, each client with its own loopback address (127.64.0.0/16, \
            chosen per datagram with IP_PKTINFO), in batches of datagrams (sendmmsg, recvmmsg). Each client is \
            SNAP's own client connection (the plug-in the swarm runs, through its allocation-free API): it does the \
            cookie handshake, acknowledges reliable packets, seals every datagram with its session key and sends a \
            PaddleState at --input-rate. Only the sockets and the schedule are the generator's, and one thread \
            drives every client, so the server is what runs out of time. (--no-pin leaves both unpinned.)

            Each step starts a fresh server with M matches, waits until every client is welcomed, warms up for \
            --warmup seconds and measures for --window seconds:
              snapshot age   kernel arrival time (SO_TIMESTAMPNS) minus the time the server tick that made the \
            snapshot was due on the server's fixed 60 Hz schedule (read from the server in this same process)
              snaps          snapshots received / the 30 Hz per client expected
              server CPU     CPU time of the server's loop thread / wall time
              inputs         PaddleStates the server decoded / those the generator's kernel accepted, whole step
              gen a/pkt      heap allocations on the generator's thread per datagram it sent or received in the \
            window (0 is the goal: nothing is allocated per packet)
            A step passes when snapshot age p99 < 16.7 ms, ≥ 99 % of snapshots and of inputs arrive and the \
            server never re-anchored its schedule. The search doubles M until a step fails, then bisects between \
            the last pass and the first failure until they are within 5 % (or --time-limit runs out). A step whose \
            generator fell 200 ms behind its own schedule proves nothing about the server: the search stays below \
            it and says so.

            Budget (DESIGN §9): ≥ 4,000 matches at 60 Hz with 30 Hz inputs on one core, about 240,000 packets/s \
            each way. On a loopback-only machine every datagram also costs its sender the kernel's delivery to the \
            receiving socket, so both cores are busy well before that: the figure shows what two cores of this \
            machine sustain, and "µs/pkt" the server's whole cost per datagram, kernel included.
            """
    )

    @Option(help: "Matches in the first step.")
    var start = 125

    @Option(help: "Never try more matches than this.")
    var maxMatches = 6_000

    @Option(help: "PaddleState inputs per second per client (DESIGN §9's budget is for 30).")
    var inputRate = 30

    @Option(help: "Seconds of warm-up in each step, after every client is welcomed.")
    var warmup = 1

    @Option(help: "Seconds measured in each step.")
    var window = 3

    @Option(help: "Seconds the whole search may take; no step starts that would end after it.")
    var timeLimit = 60

    @Flag(help: "Do not pin the server to core 0 and the load generator to core 1.")
    var noPin = false

    @Option(help: "Run exactly these match counts (comma-separated) instead of searching, e.g. 500,1000.")
    var steps: String?

    @Flag(help: "Only profile the server core without sockets (exact per-packet cost; for before/after comparisons).")
    var coreOnly = false

    func validate() throws {
        guard (2...20_000).contains(start) else { throw ValidationError("--start must be 2 to 20000, got \(start)") }
        guard (start...9_000).contains(maxMatches) else {
            throw ValidationError(
                "--max-matches must be between --start and 9000, got \(maxMatches)")
        }
        guard (1...240).contains(inputRate) else {
            throw ValidationError("--input-rate must be 1 to 240 per second, got \(inputRate)")
        }
        guard (0...30).contains(warmup), (1...30).contains(window) else {
            throw ValidationError("--warmup must be 0 to 30 s and --window 1 to 30 s")
        }
        guard (5...600).contains(timeLimit) else {
            throw ValidationError("--time-limit must be 5 to 600 s, got \(timeLimit)")
        }
        if let steps {
            guard ServerBenchmark.parseSteps(steps) != nil else {
                throw ValidationError(
                    "--steps must be match counts separated by commas, like 250,500,1000; got \(steps)")
            }
        }
    }

    func run() async throws {
        var configuration = ServerBenchmark.Configuration()
        configuration.start = start
        configuration.maxMatches = maxMatches
        configuration.inputRate = inputRate
        configuration.warmup = warmup
        configuration.window = window
        configuration.timeLimit = timeLimit
        configuration.pin = !noPin
        configuration.steps = steps.flatMap(ServerBenchmark.parseSteps)
        configuration.coreOnly = coreOnly
        let result = try await ServerBenchmark.run(configuration, environment: .skirmish)
        guard !coreOnly else { return }
        for line in result.summaryLines { print(line) }
    }
}
