import ArgumentParser
import Foundation
import SkirmishEvaluation

/// `skirmish ai-eval`: how well the AI opponent plays across latency, measured through the real protocol.
struct AIEvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ai-eval",
        abstract: "Measure the AI opponent over the real protocol: saves, intercept and prediction error, win rates.",
        discussion: """
            Every session runs its own embedded reference server on 127.0.0.1 (UDP) and real client sessions whose \
            link emulator adds the row's one-way latency (±20 % jitter, 2 % loss, each direction).

            Shots: the server's shot machine (an evaluation hook) serves seeded corner shots at the AI — 10 to 15 \
            px/tick (a hit's top speeds), aimed at a corner of the goal from that corner's side, half of them banked \
            off a side wall, all clear of a paddle that stands at the AI's home spot, none at the defence line \
            sooner than 0.4 s (what a defender across 150 ms needs to answer a shot it cannot see coming) — and \
            judges each on its own authoritative table:
              goal      the puck enters the defender's goal (a deflection that goes on to score is a goal);
              stopped   a save: the puck slower than 1 px/tick in the defender's half (all within its reach);
              returned  a save: the puck over the centre line moving away, after the defender touched it;
              timeout   none of these within 300 ticks (5 s): NOT a save, counted on its own.
            This follows the Robot Air Hockey Challenge's defend task. Beside every save rate stand the same shots \
            (same seeds, same run) against three baselines: a paddle standing still at the AI's home spot, the AI \
            with prediction off, and the Challenge's Kalman-filter baseline agent, ported. The still paddle must save \
            at most 15 %, or the shot set is too easy. Intervals are session-clustered bootstraps (2,000 resamples \
            of whole 50-shot sessions), not Wilson intervals: shots of one session are not independent.

            Intercept error is physical: the distance between the paddle's centre and the puck's centre at the tick \
            the puck crosses the defence line (puck-centre y = 440: the deepest a paddle goes, where the AI blocks \
            shots), both from the server's table; a puck already touched is taken where it would have been. p50/p95 \
            per latency, beside "reach": the share of the shots any paddle could meet on that line in time, starting \
            at the AI's home spot when its answer to the serve could first act (the next snapshot, two one-way \
            latencies and a tick), at full speed (the ceiling).

            Matches: the AI against the swarm's own `chaser` and `defender` bots, against itself with prediction \
            switched off and against the ported Kalman baseline (`kalman`), to 7 goals or --match-seconds (then the \
            higher score wins; equal scores are draws, worth half), --parallel at once on one client loop. Each row \
            reports wins with a Wilson 95 % interval and the median time to 7 goals. Prediction \
            error at 50/100/200 ms horizons comes from the AI's side of these matches: its predictor run from an \
            older snapshot, compared with the newer one.

            Targets (PASS/MISS lines): expert saves >= 95 % at 150 ms, physical intercept error p95 < 20 px at \
            150 ms, the still paddle <= 15 %; against the chaser, the defender and its no-prediction self >= 95 % \
            wins with the Wilson interval's low end >= 90 % and 7 goals within 3 minutes at the median (the Kalman \
            baseline's matches are reported, not a target); decision time p99 < 20 µs; both difficulty curves \
            monotone.

            Difficulty curve: save rate of each preset at --curve-latency, and win rate of each preset against the \
            chaser there (--curve-matches). Neither may fall from easy to expert; the command says so (a MISS line), \
            and exits 1 when the save curve falls (the win-rate curve rests on a few matches per preset, so one \
            lost match can bend it: it is reported, not made the exit status). Decision time is timed around every decision the AI made; \
            tick lateness says how late the clients' event loop ran (a busy machine makes every link worse than \
            emulated, and the report warns when p99 passes 5 ms).

            Attack headroom (--headroom SECONDS): in lock-step play of the AI under test against each rival at each \
            latency, wherever the AI began a strike, hundreds of other strikes are played out against a copy of the \
            rival and the table; the share of moments where some strike scored is a measure of what any attack \
            could do there (a lower bound). A goal is clean when the rival's paddle never hit the puck since the \
            moment; the others went in off it, found in a copy only because it plays the rival's exact future. At \
            0 ms next to no strike scores, and none cleanly, against a goalkeeper that moves at the server's \
            40 px/tick; the report names the players against whom none did.

            Human-like players (--human-matches per preset and level, at --human-latency): every preset, and the \
            adaptive AI, plays a model of a person with a mouse — a reaction delay of 150-250 ms drawn per player, \
            aim errors, a hand's speed and acceleration — at three levels (beginner, casual, skilled; \
            SkirmishOpponent's article "A human-like player"), in matches to 7 goals. Each preset and level is judged \
            against its difficulty band (SkirmishEvaluation's article): a PASS/MISS line with the win rate and the \
            goals per match it names, each with a 95 % interval bootstrapped over matches; a cell passes when every \
            point estimate lies in its band. A line per level says whether the win rate is monotone from easy to \
            expert. The adaptive AI passes when its mean goal difference (AI − player) lies within ±2 goals and at \
            least 80 % of its matches converged by the third goal (the skill then within 0.1 of its mean over the \
            rest of the match). Fewer than 40 matches a cell are too few to judge: the lines say so instead of PASS. \
            Like the match targets, these MISS lines do not change the exit status.

            Examples:
              skirmish ai-eval --quick               a few minutes, smaller samples
              skirmish ai-eval --out ai-eval.json    the full run (10-15 min), also as JSON
              skirmish ai-eval --latencies 150 --shots 2000 --matches 20
            """
    )

    @Option(help: "Seeded shots per latency row (at least 1,000 for the reported save rates).")
    var shots = 1_000

    @Option(
        help: ArgumentHelp(
            "Matches per latency row against each rival (chaser, defender, no-prediction, kalman); 35 or more lets "
                + "the Wilson interval of a perfect record clear 90 %."))
    var matches = 6

    @Option(
        help: ArgumentHelp(
            "A match still running after this many seconds ends; the higher score wins (the target: 7 goals within "
                + "180)."))
    var matchSeconds = 180

    @Option(help: ArgumentHelp("One-way latencies to evaluate, in ms.", valueName: "ms,ms,…"))
    var latencies = "0,50,100,150,250"

    @Option(
        help: ArgumentHelp(
            "The difficulty preset under test in the latency rows (easy, medium, hard, expert); the adaptive AI plays "
                + "in the human-like players' matches."))
    var difficulty = "expert"

    @Option(help: "Shots per difficulty preset for the difficulty curve (0 skips the curve).")
    var curveShots = 400

    @Option(help: "One-way latency of the difficulty curve, in ms.")
    var curveLatency = 150

    @Option(help: "Matches per difficulty preset against the chaser for the win-rate curve (0 skips it).")
    var curveMatches = 6

    @Option(help: "Shot sessions at once, all rows together (each has its own server, shooter and AI; 50 shots each).")
    var sessions = 40

    @Option(help: "Matches played at once (each has its own server and two clients).")
    var parallel = 30

    @Flag(
        help: ArgumentHelp(
            "Turn prediction off for the AI under test (the no-prediction baseline on its own, to reproduce it)."))
    var noPrediction = false

    @Option(
        help: ArgumentHelp(
            "Also measure the attack's headroom: this many seconds of lock-step play against each rival at each "
                + "latency, trying \(AttackHeadroom.candidates) other strikes wherever the AI began one (0 skips it; "
                + "60 takes a minute or two on two cores).",
            valueName: "seconds"))
    var headroom = 0

    @Option(
        help: ArgumentHelp(
            "Matches of every preset and of the adaptive AI against each human-like player (beginner, casual, "
                + "skilled) at --human-latency, judged against the difficulty bands; fewer than 40 are a quick look, "
                + "too few to judge (0 skips them).",
            valueName: "n"))
    var humanMatches = 40

    @Flag(
        help: ArgumentHelp(
            "Of the human-like players' matches, play only the adaptive AI's (to tune it without replaying the "
                + "presets)."))
    var adaptiveOnly = false

    @Option(help: ArgumentHelp("One-way latency of the human-like players' matches, in ms (a home connection)."))
    var humanLatency = 50

    @Flag(
        help: ArgumentHelp(
            "A smaller run of a few minutes: 200 shots per row (each also at the no-prediction AI, the Kalman "
                + "baseline and the still paddle), 200 per preset for the curve, 2 matches per rival and per preset "
                + "of at most 60 s."))
    var quick = false

    @Option(
        parsing: .unconditional,
        help: "Seed for shots, links and aim noise; the same seed serves the same shots (default: 1).",
        transform: Seed.parse)
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Also write the figures as JSON to this file.", valueName: "path"))
    var out: String?

    @OptionGroup(title: "Logs") var logs: LogOptions

    func validate() throws {
        guard shots > 0 else { throw ValidationError("--shots must be at least 1; got \(shots).") }
        guard matches >= 0 else { throw ValidationError("--matches must be 0 or more; got \(matches).") }
        guard matchSeconds >= 10 else {
            throw ValidationError("--match-seconds must be at least 10; got \(matchSeconds).")
        }
        guard sessions > 0, parallel > 0 else { throw ValidationError("--sessions and --parallel must be at least 1.") }
        guard curveShots >= 0 else { throw ValidationError("--curve-shots must be 0 or more; got \(curveShots).") }
        guard (0...3_600).contains(headroom) else {
            throw ValidationError("--headroom takes 0 to 3600 seconds of play per rival and latency; got \(headroom).")
        }
        guard humanMatches >= 0, (0...2_000).contains(humanLatency) else {
            throw ValidationError(
                "--human-matches must be 0 or more and --human-latency 0 to 2000 ms; got \(humanMatches) and "
                    + "\(humanLatency).")
        }
        guard curveMatches >= 0 else {
            throw ValidationError("--curve-matches must be 0 or more; got \(curveMatches).")
        }
        _ = try plan()
    }

    /// The plan the options describe.
    func plan() throws -> EvalPlan {
        do {
            let difficulty = try EvalPlan.parseDifficulty(difficulty)
            var plan = EvalPlan(
                shots: shots, matches: matches, matchSeconds: matchSeconds,
                latencies: try EvalPlan.parseLatencies(latencies), difficulty: difficulty, curveShots: curveShots,
                curveLatency: curveLatency, sessions: sessions, parallel: parallel, seed: seed,
                curveMatches: curveMatches)
            plan.humanMatches = humanMatches
            plan.humanLatency = humanLatency
            plan.humanPresets = !adaptiveOnly
            if quick { plan.shrinkToQuickRun() }
            plan.predicts = !noPrediction
            plan.headroomSeconds = headroom
            return plan
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let plan = try plan()
        let progress = EvalProgress()
        let logger = logs.logger("skirmish.ai-eval", run: "ai-eval-\(seed)")
        let reporter = Task { await Self.report(progress, plan: plan) }
        let report: EvalReport
        do {
            report = try await plan.evaluate(progress: progress, logger: logger)
        } catch {
            reporter.cancel()
            throw error
        }
        // The reporter prints its last line as it wakes: wait for it, so it comes before the table.
        reporter.cancel()
        await reporter.value
        Console.clearLive()
        for line in report.tableLines() { Console.line(line) }
        if let out {
            do {
                try report.json().write(to: URL(fileURLWithPath: out))
                Console.note("figures written to \(out)")
            } catch {
                throw ValidationError("cannot write --out \(out): \(error). Check the folder exists and is writable.")
            }
        }
        // The save curve rests on hundreds of shots per preset; the win-rate curve on a few matches, which one lost
        // match can bend, so it is a MISS line only.
        if report.curve.map({ !$0.monotone }) ?? false {
            throw ExitCode(1)
        }
    }

    /// A progress line on stderr every two seconds while the evaluation runs.
    static func report(_ progress: EvalProgress, plan: EvalPlan) async {
        let clock = ContinuousClock()
        let start = clock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(2))
            let (shots, matches, headroom) = progress.counts
            let line = plan.progressLine(
                shots: shots, matches: matches, headroomSeconds: headroom,
                elapsedSeconds: start.duration(to: clock.now).components.seconds)
            if Console.isTerminal { Console.live(line) } else { Console.progress(line) }
        }
    }
}
