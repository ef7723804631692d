import ArgumentParser
import SkirmishBench

/// `skirmish bench opponent`: the cost of one AI decision, per difficulty, and its heap allocations.
struct OpponentBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "opponent",
        abstract: "Time one AI opponent decision per difficulty and count its heap allocations.",
        discussion: """
            Budget (DESIGN §9): one decision under 20 µs at p99 — `skirmish ai-eval` times every decision in real \
            play and checks that; this is the mean of a tight loop. The opponent plays a stream of seeded shots served on \
            the shared physics: a snapshot every second tick arriving 100 ms late, a round trip every 200 ms, and a \
            decision every tick — so the figure covers prediction across latency, the path scan, shot selection \
            and the simulated strikes. Exits 1 when a decision allocates.
            """
    )

    @Option(help: "Decisions timed per difficulty.")
    var iterations = 200_000

    func validate() throws {
        guard iterations > 0 else { throw ValidationError("--iterations must be positive, got \(iterations)") }
    }

    func run() throws {
        let result = try OpponentBenchmark.run(.init(iterations: iterations), environment: .skirmish)
        for line in result.lines { print(line) }
        if !result.passed { throw ExitCode(1) }
    }
}
