import ArgumentParser
import SkirmishBench

/// `skirmish bench net`: what the client side of SkirmishNet costs per packet and per open session.
struct NetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "net",
        abstract: "Measure Ping round trips through the client runtime over loopback UDP, and memory per open session.",
        discussion: """
            Two event loops, each a single thread: the clients' epoll ClientLoop, pinned to core 1, and an echo \
            responder's NIO loop, pinned to core 0 (with --no-pin neither is pinned). The responder is stateless — \
            it answers the cookie handshake and turns each Ping into a Pong in place — so what the clients' loop \
            spends is the cost of the path a swarm's bots take: one machine per client on the runtime's shell, \
            carrying a SnapConnection (the protocol state machine and its ReliableEndpoint), the codec, and a \
            connected UDP socket the ClientLoop reads and writes from fixed buffers. Each machine is woken by the \
            shell's heap at its own deadline (acks owed are sent as packets arrive).

            Two scenarios, each measured for --duration seconds after every session has connected:
              1 client       one session, one Ping in flight: latency-bound round trips
              N clients      --clients sessions on the one loop, one Ping in flight each: throughput-bound

            "per core" figures divide by the CPU time the clients' loop thread actually used (its \
            CLOCK_THREAD_CPUTIME_ID), so they hold even when that thread was not busy all the time. Allocations are \
            the heap allocations made on that thread (and on the responder's). Memory per open session is the \
            growth of this process's resident set (/proc/self/statm) from before the N sessions were opened to \
            when all had connected, divided by N: user-space memory only (kernel socket buffers are not in it), and \
            the stateless responder keeps nothing per client.
            """
    )

    @Option(help: "Seconds each scenario is measured for (after its sessions have connected).")
    var duration = 3

    @Option(help: "Sessions in the many-clients scenario, each with its own UDP socket.")
    var clients = 1_000

    @Flag(help: "Do not pin the two loops to cores 0 and 1.")
    var noPin = false

    func validate() throws {
        guard (1...60).contains(duration) else {
            throw ValidationError("--duration must be 1 to 60 seconds, got \(duration)")
        }
        guard (1...15_000).contains(clients) else {
            throw ValidationError("--clients must be 1 to 15000 (one socket each), got \(clients)")
        }
    }

    func run() async throws {
        try Measurement.checkAllocationCounter(.skirmish)
        if let note = try OpenFileLimit.ensure(clients + 256) { Console.note(note) }
        var configuration = NetBenchmark.Configuration()
        configuration.duration = duration
        configuration.clients = clients
        configuration.pin = !noPin
        let outcome = try await NetBenchmark.run(configuration, environment: .skirmish)
        for line in outcome.lines { print(line) }
        if !outcome.passed { throw ExitCode(1) }
    }
}
