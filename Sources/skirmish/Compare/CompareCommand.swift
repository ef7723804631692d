import ArgumentParser
import Foundation
import SkirmishSwarm

/// `skirmish compare BASE.json NEW.json`: did this run regress against the baseline?
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare a run with a baseline run: what got better, what got worse, and whether it is real.",
        discussion: """
            Reads two summary.json files written by `skirmish swarm` or `skirmish soak` and compares, persona by \
            persona: RTT p50/p95/p99, snapshot age p99 and tick lateness p99 (from the exact HDR values), packets \
            per second, errors, desyncs, failed checks and completed matches per bot-hour, and the misprediction \
            rate (per prediction judged, so a faster server's extra predictions are not counted against it). Each \
            figure says which way is better. Runs of different scripts are compared with a note saying so.

            Each difference is tested on the per-second blocks each run keeps: a block bootstrap (whole blocks \
            resampled, since samples close in time move together, and errors come in bursts) for percentiles, \
            throughput and counts per bot-hour. A figure is marked worse or better only when the difference is \
            significant at --confidence and at least --tolerance of the baseline (latencies: and at least \
            --min-latency-change); any desync where the baseline had none is worse.

              skirmish compare nightly-base/summary.json skirmish-out/nightly-20261124/summary.json
              skirmish compare base.json new.json --fail-on worse      a CI gate
              skirmish compare base.json new.json --json > diff.json

            A run can also compare itself as it ends: `skirmish swarm script.yaml --baseline base.json` adds the \
            comparison to the printed summary and to report.html.

            A run whose own generator could not keep its schedule (its summary warns so) measured the generator: \
            its latencies, throughput, mispredictions and completed matches are left out, and the comparison \
            says why.

            A figure a persona did not measure in one run (a protocol without round trips, a behaviour that checks \
            no state) is listed as "not measured in" that run: never compared as 0, never worse, never a reason \
            for --fail-on to fail.

            Exit status: 0, or 1 when --fail-on worse and something got worse; 2 for unreadable input or when \
            nothing could be compared (summaries from before 0.17 keep no samples).
            """
    )

    enum FailOn: String, ExpressibleByArgument, CaseIterable {
        case worse, never
    }

    @Argument(help: ArgumentHelp("The baseline run's summary.json.", valueName: "BASE.json"))
    var base: String

    @Argument(help: ArgumentHelp("The run to judge.", valueName: "NEW.json"))
    var new: String

    @Option(help: ArgumentHelp("Exit 1 when any figure got worse (worse), or never fail (never).", valueName: "when"))
    var failOn: FailOn = .never

    @OptionGroup var comparison: ComparisonOptions

    @Flag(help: "List every figure compared, not only those that changed.")
    var all = false

    @Flag(help: "Print the comparison as JSON (every figure) instead of a table.")
    var json = false

    func run() throws {
        let baseSummary = try SummaryFile.load(base, role: "baseline")
        let newSummary = try SummaryFile.load(new, role: "run")
        let result = Comparison(base: baseSummary, new: newSummary, options: try comparison.options())
        guard result.comparedAnything else {
            for note in result.notes { Console.note(note) }
            Console.note(
                "nothing could be compared (no persona in common with per-block samples); rerun the older run with "
                    + "this version, or compare runs of the same script")
            throw ExitCode(2)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(result.table(all: all))
        }
        if failOn == .worse, result.anyWorse { throw ExitCode(1) }
    }
}

/// How strict a comparison is: shared by `skirmish compare` and `--baseline`.
struct ComparisonOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Confidence of each interval and test.", valueName: "percent"))
    var confidence = "99%"

    @Option(help: ArgumentHelp("The smallest change that counts, relative to the baseline.", valueName: "percent"))
    var tolerance = "10%"

    @Option(help: ArgumentHelp("The smallest latency change that counts.", valueName: "duration"))
    var minLatencyChange = "1ms"

    @Option(help: "Bootstrap resamples per figure (more: steadier intervals, slower).")
    var resamples = 1_000

    func options() throws -> Comparison.Options {
        do {
            return try Comparison.Options(
                confidence: confidence, tolerance: tolerance, minimumLatencyChange: minLatencyChange,
                resamples: resamples)
        } catch {
            throw ValidationError(error.description)
        }
    }
}
