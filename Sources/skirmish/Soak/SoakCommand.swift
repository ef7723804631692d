import ArgumentParser
import SkirmishRun
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishWire

/// `skirmish soak SCRIPT`: a swarm for hours, with health checks every minute and a checkpointed summary.
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Run a swarm for hours and check, every minute, that the process and the server stay healthy.",
        discussion: """
            A soak is a swarm with a nightly job's defaults: it runs for the script's length (bots/soak.yaml holds \
            for 8 hours), pushes metrics periodically when --push names a collector, and every --check-interval \
            checks its health invariants:

              memory         resident memory (VmRSS) flat after warm-up
              open_files     file descriptors (/proc/self/fd) flat after warm-up
              desyncs        desync episodes per completed match within --max-desync-rate (default: none)
              error_budget   errors per handshake attempt within --error-budget
              tick_lateness  input lateness p99 within --lateness-budget in nearly every interval
              collector      collector outages (reported, never fatal: summary.json holds every figure)

            "Flat" means: over the checks taken after --warm-up (and before a closing ramp down), the Theil–Sen \
            line — the median of the slopes between every pair of checks, which ignores a few wild samples — rises \
            by no more than the tolerance (--rss-tolerance MiB or 10 % of the level; --fd-tolerance descriptors or \
            5 %). The longer the run, the smaller the leak it catches.

            summary.json is rewritten atomically at every check (soak.state "running"), so a run killed without \
            warning still leaves its figures; SIGINT or SIGTERM stops cleanly with a final push and the full \
            report.

              skirmish soak bots/soak.yaml --push http://vm:8428/api/v1/import/prometheus
              skirmish soak bots/soak.yaml --duration 1h --out /tmp/soak1h
              skirmish soak bots/soak.yaml --shard 2/8 --target udp://10.0.0.5:4000

            Exit status: 0 when every threshold and health check holds, 99 when one fails, 2 for bad input, 130 or \
            143 when SIGINT or SIGTERM stopped it (after the final push and the results folder).
            """
    )

    @OptionGroup var options: RunOptions

    @Option(help: ArgumentHelp("Time between health checks and checkpoints (e.g. 1m, 10s).", valueName: "duration"))
    var checkInterval = "1m"

    @Option(
        help: ArgumentHelp(
            "Time before memory and descriptors must be flat (default: the ramp up plus 30 s, at least a tenth of "
                + "the run, at most 30 min).",
            valueName: "duration"))
    var warmUp: String?

    @Option(help: ArgumentHelp("Errors allowed per handshake attempt (e.g. 1%, 0.1%).", valueName: "percent"))
    var errorBudget = "1%"

    @Option(help: ArgumentHelp("Desync episodes allowed per completed match (e.g. 0, 0.1%).", valueName: "rate"))
    var maxDesyncRate = "0"

    @Option(help: ArgumentHelp("Tick lateness p99 allowed per interval (e.g. 5ms).", valueName: "duration"))
    var latenessBudget = "5ms"

    @Option(help: ArgumentHelp("Resident memory growth allowed after warm-up, MiB (or 10 % of it).", valueName: "MiB"))
    var rssTolerance = 32.0

    @Option(help: ArgumentHelp("Descriptor growth allowed after warm-up (or 5 % of the count).", valueName: "count"))
    var fdTolerance = 16

    func run() async throws {
        try await InputError.reporting {
            let interval = try Self.duration(checkInterval, "--check-interval")
            guard interval >= .seconds(1) else {
                throw InputError("--check-interval \(checkInterval): check at most once a second, e.g. 10s or 1m")
            }
            var settings = try options.settings(command: "soak")
            let policy = try makePolicy(plan: settings.plan)
            settings.soak = SwarmRun.Settings.Soak(policy: policy, interval: interval)
            try await SwarmRun(settings, console: options.console).runToExitStatus()
        }
    }

    private func makePolicy(plan: LoadPlan) throws -> HealthPolicy {
        var policy = HealthPolicy(plan: plan)
        if let warmUp {
            policy.warmUp = try Self.duration(warmUp, "--warm-up").seconds
        }
        guard let budget = Quantity.percentage(errorBudget) else {
            throw InputError("--error-budget \(errorBudget): write it as a percentage, e.g. 1% or 0.1%")
        }
        policy.errorBudget = budget
        guard let desyncRate = Quantity.percentage(maxDesyncRate) ?? Double(maxDesyncRate), desyncRate >= 0 else {
            throw InputError("--max-desync-rate \(maxDesyncRate): write it as a rate, e.g. 0 or 0.1%")
        }
        policy.maxDesyncRate = desyncRate
        policy.latenessBudget = try Self.duration(latenessBudget, "--lateness-budget").seconds
        guard rssTolerance >= 0, fdTolerance >= 0 else {
            throw InputError("--rss-tolerance and --fd-tolerance cannot be negative")
        }
        policy.memory.absolute = rssTolerance * 1_048_576
        policy.openFiles.absolute = Double(fdTolerance)
        return policy
    }

    private static func duration(_ text: String, _ option: String) throws -> Duration {
        guard let parsed = Quantity.duration(text) else {
            throw InputError("\(option) \(text): not a duration; write it like 10s, 1m or 5ms")
        }
        return parsed
    }
}
