import ArgumentParser
import SkirmishBench

/// `skirmish bench codec`: encode + decode cost and heap allocations per packet for the fixed-size messages.
struct CodecBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "Time encode + decode of the fixed-size messages and count heap allocations per packet.",
        discussion: """
            Budget (DESIGN §9): encode + decode of a PaddleState well under 1 µs with no heap allocation. \
            Exits 1 when a fixed-size message allocates on the hot path.
            """
    )

    @Option(help: "Encode + decode round trips per message type.")
    var iterations = 2_000_000

    func validate() throws {
        guard iterations > 0 else { throw ValidationError("--iterations must be positive, got \(iterations)") }
    }

    func run() throws {
        let result = try CodecBenchmark.run(.init(iterations: iterations), environment: .skirmish)
        for line in result.lines { print(line) }
        if !result.passed { throw ExitCode(1) }
    }
}
