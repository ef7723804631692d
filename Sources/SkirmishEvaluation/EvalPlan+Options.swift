import Logging
import NIOCore
import NIOPosix
import SkirmishOpponent
import SkirmishSwarm

extension EvalPlan {
    /// An `ai-eval` option that cannot be read: the text names the option, the value and what to write instead.
    package struct OptionError: Error, Equatable, CustomStringConvertible {
        package var description: String
    }

    /// `--latencies`: one-way latencies in ms from 0 to 2000, separated by commas (`0,50,150`).
    package static func parseLatencies(_ text: String) throws(OptionError) -> [Int] {
        var values: [Int] = []
        for part in text.split(separator: ",") {
            let trimmed = part.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
            guard let value = Int(String(trimmed)), (0...2_000).contains(value) else {
                throw OptionError(
                    description: "--latencies takes one-way latencies in ms between 0 and 2000, separated by commas "
                        + "(like 0,50,150); `\(part)` is not one.")
            }
            values.append(value)
        }
        guard !values.isEmpty else {
            throw OptionError(description: "--latencies names no latency; try 0,50,100,150,250.")
        }
        return values
    }

    /// `--difficulty`: one of the presets (the adaptive AI is measured in the human-like players' matches, not in
    /// the latency rows, whose shots have no score to adapt to).
    package static func parseDifficulty(_ text: String) throws(OptionError) -> Opponent.Difficulty {
        let name = text.lowercased()
        if Opponent.Level(rawValue: name) == .adaptive {
            throw OptionError(
                description: "--difficulty takes a preset (easy, medium, hard, expert): the adaptive AI has no "
                    + "score to adapt to in the shot rows; it is measured against the human-like players "
                    + "(--human-matches).")
        }
        guard let difficulty = Opponent.Difficulty(rawValue: name) else {
            throw OptionError(
                description: "--difficulty must be one of easy, medium, hard, expert; got `\(text)`.")
        }
        return difficulty
    }

    /// `--quick`: at most 200 shots per row and per preset, 2 matches per rival and per preset of at most 60 s.
    package mutating func shrinkToQuickRun() {
        shots = min(shots, 200)
        matches = min(matches, 2)
        curveShots = min(curveShots, 200)
        curveMatches = min(curveMatches, 2)
        humanMatches = min(humanMatches, 2)
        matchSeconds = min(matchSeconds, 60)
    }

    /// The progress line `ai-eval` prints every two seconds; the headroom's part only when it is measured.
    package func progressLine(shots done: Int, matches played: Int, headroomSeconds: Int = 0, elapsedSeconds: Int64)
        -> String
    {
        let headroom =
            totalHeadroomSeconds > 0 ? ", headroom \(headroomSeconds)/\(totalHeadroomSeconds) s of play" : ""
        return "ai-eval: \(done)/\(totalShots) shots, \(played)/\(totalMatches) matches\(headroom), \(elapsedSeconds) s"
    }

    /// Seconds of lock-step play the attack headroom takes: its seconds for every rival at every latency.
    package var totalHeadroomSeconds: Int { headroomSeconds * EvalRunner.Rival.scripted.count * latencies.count }

    /// Plays the whole plan: one event loop for the embedded servers and one client runtime, both released when the
    /// evaluation ends or fails.
    package func evaluate(progress: EvalProgress, logger: Logger = Logger(label: "skirmish.ai-eval")) async throws
        -> EvalReport
    {
        let servers = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let report: EvalReport
        do {
            let clients = try AgentRunner(name: "skirmish-ai-eval", seed: seed, logger: logger)
            let runner = EvalRunner(
                serverLoop: servers, clients: clients, seed: seed, progress: progress, logger: logger)
            report = try await run(with: runner)
        } catch {
            try? await servers.shutdownGracefully()
            throw error
        }
        try? await servers.shutdownGracefully()
        return report
    }
}
