import ArgumentParser
import SkirmishBench

/// `skirmish bench export`: serialisation cost per format, and whether pushing disturbs a running swarm.
struct ExportBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Time rendering 10,000 series in every push format, and measure pushing's effect on tick lateness.",
        discussion: """
            Budgets (DESIGN §9): 10,000 series serialised in under 50 ms in every format, and a push never \
            stalls an event loop.

            Part 1 renders a snapshot of --series series (counters, gauges and HDR histograms exported as \
            buckets) in each format and prints milliseconds, bytes and heap allocations per render.

            Part 2 runs the same Puck swarm against the embedded server --rounds times without an exporter and \
            --rounds times with one pushing every format to a local HTTP sink every --push-interval-ms, \
            interleaved, and compares the bots' tick lateness. The verdict is "no measurable effect" when the \
            difference is within the spread between runs of the same kind.

            Exits 1 when a format misses the 50 ms budget or pushing measurably raises tick lateness p99.
            """
    )

    @Option(help: "Series in the rendered snapshot (80 % counters, 15 % gauges, 5 % histograms).")
    var series = 10_000

    @Option(help: "Renders per format (the mean is reported).")
    var repeats = 7

    @Option(help: "Puck bots in each swarm run of part 2.")
    var bots = 300

    @Option(help: "Seconds each swarm run of part 2 holds its bots.")
    var seconds = 12

    @Option(help: "Runs of each kind (without and with pushing), interleaved.")
    var rounds = 2

    @Option(help: "Milliseconds between pushes in part 2 (the default push interval is 5,000).")
    var pushIntervalMs = 250

    @Flag(help: "Only part 1 (serialisation).")
    var skipSwarm = false

    func validate() throws {
        guard series >= 10 else { throw ValidationError("--series must be at least 10, got \(series)") }
        guard repeats > 0 else { throw ValidationError("--repeats must be positive, got \(repeats)") }
        guard bots > 0, bots <= 5_000 else { throw ValidationError("--bots must be 1…5000, got \(bots)") }
        guard (1...600).contains(seconds) else { throw ValidationError("--seconds must be 1…600, got \(seconds)") }
        guard (1...10).contains(rounds) else { throw ValidationError("--rounds must be 1…10, got \(rounds)") }
        guard pushIntervalMs >= 50 else {
            throw ValidationError("--push-interval-ms must be at least 50, got \(pushIntervalMs)")
        }
    }

    func run() async throws {
        var configuration = ExportBenchmark.Configuration()
        configuration.series = series
        configuration.repeats = repeats
        configuration.bots = bots
        configuration.seconds = seconds
        configuration.rounds = rounds
        configuration.pushIntervalMs = pushIntervalMs
        configuration.skipSwarm = skipSwarm
        let result = try await ExportBenchmark.run(configuration, environment: .skirmish)
        if !result.passed { throw ExitCode(1) }
    }
}
