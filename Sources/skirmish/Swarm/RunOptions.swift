import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import SkirmishTelemetry

/// The options every run of a script takes: `skirmish swarm` and `skirmish soak` share them.
struct RunOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The swarm script to run.", valueName: "script.yaml"))
    var script: String

    @Option(
        name: .customLong("env"),
        help: ArgumentHelp(
            "A value for ${KEY} in the script (repeatable); it wins over the environment.",
            discussion: """
                Scripts may write ${NAME} or ${NAME:-default} in any value (never in a key), such as \
                `profile: [{ramp: {to: ${BOTS:-40}, over: 30s}}]`. \
                A name is read from --env first, then from the environment; ${NAME} with NAME set nowhere is an \
                error naming the line. $$ is a literal $.
                """,
            valueName: "KEY=VALUE"),
        transform: ScriptVariable.parse)
    var variables: [ScriptVariable] = []

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
            discussion: """
                Kubernetes sets JOB_COMPLETION_INDEX in each pod of an Indexed Job; the manifest must pass the \
                Job's completions as JOB_COMPLETIONS (deploy/skirmish-job.yaml does). Give every shard the same \
                --run-id so the collector sums them as one run.
                """,
            valueName: "i/n"))
    var shard: String?

    @Option(
        name: .customLong("run-id"),
        help: ArgumentHelp(
            "The run's id, the run label of every series (default: SKIRMISH_RUN_ID, else <script>-<time>-<hex>).",
            discussion: """
                Every shard of one run must share it. Letters, digits, '.', '_' and '-', at most 128; the \
                Kubernetes manifest sets SKIRMISH_RUN_ID from the Job's name.
                """,
            valueName: "id"))
    var runID: String?

    /// The run id given by `--run-id` or `SKIRMISH_RUN_ID`, or `nil` to make one.
    func givenRunID(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        runID ?? environment["SKIRMISH_RUN_ID"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether a run id is safe as a label, a Pushgateway grouping value and a folder name.
    static func isValidRunID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id != "." && id != ".."
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
    }

    @Option(
        parsing: .unconditional,
        help: "Seed for bots, personas and emulated links: the same seed replays the same run (default: 1).",
        transform: Seed.parse)
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Results folder (default skirmish-out/<run id>).", valueName: "dir"))
    var out: String?

    @Option(
        help: ArgumentHelp(
            "Also write the figures as JSON lines while the run goes: one line per second per persona.",
            discussion: """
                Each line: t, time, run, shard, persona, game, bots, packets_per_second, errors, desyncs, \
                mispredictions, predictions, matches_completed, checks_failed, and rtt, snapshot_age and \
                tick_lateness with count, p50, p95, p99, max (seconds) and the second's HDR values and counts \
                (add lines' counts for exact percentiles over any span). Written once a second in whole lines; \
                stops growing at 512 MiB with a last line saying so.
                """,
            valueName: "file.jsonl"))
    var outStream: String?

    @Option(
        help: ArgumentHelp(
            "Also write the figures as CSV while the run goes: the same columns as --out-stream, without HDR values.",
            valueName: "file.csv"))
    var outCsv: String?

    @Flag(
        help: ArgumentHelp(
            "Replace an earlier run's results in --out (and the --out-stream and --out-csv files).",
            discussion: """
                Without it, a results folder that already holds summary.json, metrics.om or report.html is refused \
                before anything starts, so a rerun under the same --run-id never silently replaces last night's \
                results.
                """))
    var overwrite = false

    @Flag(
        name: .customLong("merge"),
        help: ArgumentHelp(
            "As one shard of a run, merge the run's shards when this is the last to finish.",
            discussion: """
                Give each shard --out <run folder>/<shard> (the Kubernetes manifest's /results/<run>/<index>). \
                Each shard, once its own results are written, reads its siblings; the last to finish writes the \
                run's one summary.json, report.html and verdict into <run folder>/merged, as `skirmish merge` \
                would, and exits with the run's verdict (0 or 99). A shard that does not merge exits 0 when only \
                its own thresholds failed: its slice alone is not the run (its verdict stays in its summary.json \
                and the merged table). A shard that never finishes leaves the merge to \
                `skirmish merge <run folder> --allow-missing`.
                """))
    var mergeShards = false

    @OptionGroup var push: PushOptions

    @OptionGroup(title: "Logs") var logs: LogOptions

    @Option(
        help: ArgumentHelp(
            "Where to serve /metrics while the run lasts, host:port (default: a free loopback port, printed).",
            discussion: """
                Give a fixed address when a Prometheus scrapes the run (it needs a known target). At the end the \
                endpoint serves the final figures and stays up until one more scrape has read them, at most \
                --metrics-linger seconds; a run nobody scraped ends at once.
                """,
            valueName: "host:port"), transform: HostPort.parse)
    var metrics = HostPort(host: "127.0.0.1", port: 0)

    @Option(help: ArgumentHelp("Longest wait for a last scrape of /metrics after the run.", valueName: "seconds"))
    var metricsLinger = 5

    @Option(
        help: ArgumentHelp(
            "With --target: the server's Prometheus /metrics URL, read at the end for the report's server figures.",
            discussion: """
                The embedded server's figures are always in the report; a server elsewhere (skirmish serve, or one \
                exposing the same skirmish_server_* series) is scraped once when the run ends.
                """,
            valueName: "url"))
    var serverMetrics: String?

    @Option(
        help: ArgumentHelp(
            "A baseline run's summary.json: compare this run with it in the summary and report.html.",
            discussion: """
                The same comparison as `skirmish compare BASE.json NEW.json` (a block bootstrap of each run's seconds \
                at 99 %, changes under 10 % or 1 ms ignored), added to the printed summary, summary.json and \
                report.html. It does not change the exit status; gate CI on `skirmish compare --fail-on worse`.
                """,
            valueName: "summary.json"))
    var baseline: String?

    @Option(help: "Event loops (threads) for the bots (default: one per core).")
    var loops = min(System.coreCount, 256)

    @Flag(help: "Print a plain progress line every 5 s even on a terminal.")
    var plainProgress = false

    /// Checks the addresses before anything starts: a mistyped one is bad input, never a half-started run.
    func validate() throws {
        guard (1...256).contains(loops) else {
            throw ValidationError(
                "--loops \(loops): bots run on 1 to 256 event loops (threads); the default is one per core, "
                    + "\(System.coreCount) here")
        }
        guard (try? SocketAddress(ipAddress: metrics.host, port: metrics.port)) != nil || metrics.host == "localhost"
        else {
            throw ValidationError(
                "--metrics \(metrics.defaultValueDescription): the host must be an IP address (127.0.0.1, 0.0.0.0, "
                    + "::1) or localhost")
        }
        if let id = givenRunID(), !Self.isValidRunID(id) {
            let source = runID == nil ? "SKIRMISH_RUN_ID" : "--run-id"
            throw ValidationError(
                "\(source) '\(id)': a run id is 1 to 128 letters, digits, '.', '_' or '-' (it becomes a label, a "
                    + "Pushgateway group and a folder name)")
        }
        if let url = serverMetrics {
            guard target != nil else {
                throw ValidationError(
                    "--server-metrics \(url): only with --target (without one, the run reports its in-process "
                        + "server's figures)")
            }
            do {
                _ = try PushTarget.components(of: url)
            } catch {
                throw ValidationError(
                    "--server-metrics '\(url)': \(error.problem); write it like http://game-server:8080/metrics")
            }
        }
        guard (0...600).contains(metricsLinger) else {
            throw ValidationError("--metrics-linger \(metricsLinger): give 0 to 600 seconds")
        }
    }
}
