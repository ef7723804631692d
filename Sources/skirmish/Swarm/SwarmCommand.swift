import ArgumentParser
import SkirmishRun
import SkirmishSwarm

/// `skirmish swarm SCRIPT`: the main job.
struct SwarmCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swarm",
        abstract: "Run a swarm of scripted bots against a game server and report what players would feel.",
        discussion: """
            A script (bots/*.yaml) names a load profile, weighted personas and pass/fail thresholds — or several \
            `scenarios` at once, each with its own personas, load model and start (bots/launch-day.yaml). Bots \
            join matches through the real wire protocol, play them, and measure round trips, snapshot age, tick \
            lateness, handshake time, loss, resends and desyncs.

            Without --target the embedded reference server starts in this process on free loopback ports, so a \
            fresh machine needs nothing else:

              skirmish swarm bots/quickstart.yaml
              skirmish swarm bots/puck-ladder.yaml --bots 2000 --target udp://10.0.0.5:4000
              skirmish swarm bots/soak.yaml --push http://vm:8428/api/v1/import/prometheus

            Results go to --out (default skirmish-out/<run id>/): summary.json, metrics.om (OpenMetrics), \
            metrics.json (exact, for `skirmish merge`), script.yaml and report.html. Shards of one run (--shard i/n) \
            merge into one summary and verdict with `skirmish merge`, or by themselves with --merge. While the run lasts, its metrics are served as Prometheus text at a loopback /metrics \
            URL printed at the start (or pushed with --push).

            Thresholds judge the whole run, or every sliding window (`rtt_p99: {limit: "< 120ms", window: 5m}`); \
            with `abort_on_fail: true` a failing one stops the run at once. A filter judges part of the run: \
            `rtt_p99{persona:chaser}`, `errors{game:snap}`, or a tag a persona carries (`tags: {tier: premium}`, \
            then `rtt_p99{tier:premium}`), or a scenario (`rtt_p99{scenario:ranked}`). Values may read the environment: `to: ${BOTS:-40}`, or --env BOTS=200. `--baseline base.json` compares this \
            run with an earlier one (as `skirmish compare` does) in the summary and report.

            Exit status: 0 when every threshold holds, 99 when one fails (or stopped the run), 2 for bad input (script, flags, target), \
            130 or 143 when SIGINT or SIGTERM stopped the run (after the final push and the results folder).
            """
    )

    @OptionGroup var options: RunOptions

    func run() async throws {
        try await InputError.reporting {
            try await SwarmRun(try options.settings(command: "run"), console: options.console).runToExitStatus()
        }
    }
}
