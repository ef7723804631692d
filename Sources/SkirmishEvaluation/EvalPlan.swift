import NIOCore
import SkirmishOpponent
import SkirmishScript

/// What an `ai-eval` run plays, in three phases one after the other (so they do not compete for the CPU): shots at
/// every latency, the difficulty curve, then the matches.
package struct EvalPlan: Sendable {
    package var shots: Int
    package var matches: Int
    package var matchSeconds: Int
    package var latencies: [Int]
    package var difficulty: Opponent.Difficulty
    package var curveShots: Int
    package var curveLatency: Int
    /// Matches per preset against ``curveRival`` at ``curveLatency``: the win-rate side of the difficulty curve.
    package var curveMatches: Int
    /// The rival of the win-rate curve.
    package static let curveRival = EvalRunner.Rival.chaser
    package var sessions: Int
    package var parallel: Int
    package var seed: UInt64

    package init(
        shots: Int, matches: Int, matchSeconds: Int, latencies: [Int], difficulty: Opponent.Difficulty,
        curveShots: Int, curveLatency: Int, sessions: Int, parallel: Int, seed: UInt64, curveMatches: Int = 0
    ) {
        self.curveMatches = curveMatches
        self.shots = shots
        self.matches = matches
        self.matchSeconds = matchSeconds
        self.latencies = latencies
        self.difficulty = difficulty
        self.curveShots = curveShots
        self.curveLatency = curveLatency
        self.sessions = sessions
        self.parallel = parallel
        self.seed = seed
    }

    package var totalShots: Int { shots * latencies.count + curveShots * Opponent.Difficulty.allCases.count }
    package var totalMatches: Int {
        matches * EvalRunner.Rival.allCases.count * latencies.count + curveMatches * Opponent.Difficulty.allCases.count
    }

    package func run(with runner: EvalRunner) async throws -> EvalReport {
        var report = EvalReport(difficulty: difficulty.rawValue, seed: seed, matchSeconds: matchSeconds)
        let configuration = OpponentConfiguration(difficulty: difficulty)
        let levels = Opponent.Difficulty.allCases
        // Shots are played in sessions of at most `shotsPerSession`, the latency rows and the curve's presets
        // interleaved so every row progresses together; at most `sessions` run at once.
        var shotJobs: [ShotJob] = []
        var rowJobs: [[ShotJob]] = []
        let perSession = min(max((totalShots + sessions - 1) / sessions, 10), Self.shotsPerSession)
        for (row, latency) in latencies.enumerated() {
            rowJobs.append(
                Self.split(shots, into: Self.chunks(shots, of: perSession)).map {
                    ShotJob(row, $0, configuration, latency, curve: false)
                })
        }
        if curveShots > 0 {
            for (row, level) in levels.enumerated() {
                let preset = OpponentConfiguration(difficulty: level)
                rowJobs.append(
                    Self.split(curveShots, into: Self.chunks(curveShots, of: perSession)).map {
                        ShotJob(row, $0, preset, curveLatency, curve: true)
                    })
            }
        }
        for index in 0..<(rowJobs.map(\.count).max() ?? 0) {
            for jobs in rowJobs where index < jobs.count { shotJobs.append(jobs[index]) }
        }
        var matchJobs: [MatchJob] = []
        for latency in latencies where matches > 0 {
            for rival in EvalRunner.Rival.allCases {
                for _ in 0..<matches { matchJobs.append(MatchJob(latency: latency, rival: rival, level: nil)) }
            }
        }
        for _ in 0..<curveMatches {
            for level in levels {
                matchJobs.append(MatchJob(latency: curveLatency, rival: Self.curveRival, level: level))
            }
        }
        // Shots and matches run side by side, each within its own bound on sessions at once: enough to finish in a
        // few minutes, few enough that the event loops keep their schedule (the report shows their lateness).
        let limit = Duration.seconds(matchSeconds)
        async let shotResults = playShots(shotJobs, runner: runner)
        async let matchResults = Self.bounded(matchJobs, parallel: parallel) { number, job in
            let session = try await runner.match(
                configuration: job.level.map { OpponentConfiguration(difficulty: $0) } ?? configuration,
                rival: job.rival,
                link: EvalRunner.link(latencyMilliseconds: job.latency), session: number, limit: limit)
            return (job, session)
        }
        let (allShots, allMatches) = try await (shotResults, matchResults)
        let matchSessions = allMatches.filter { $0.1.played && $0.0.level == nil }
        let curveMatchSessions = allMatches.filter { $0.1.played && $0.0.level != nil }
        let shotSessions = allShots.filter { !$0.0.curve }.map { ($0.0.row, $0.1) }
        let curveSessions = allShots.filter { $0.0.curve }.map { ($0.0.row, $0.1) }
        for (row, latency) in latencies.enumerated() {
            report.addShots(shotSessions.filter { $0.0 == row }.map(\.1), latency: latency)
        }
        if curveShots > 0 {
            report.addCurve(
                levels.enumerated().map { row, level in (level.rawValue, curveSessions.filter { $0.0 == row }.map(\.1))
                },
                latency: curveLatency)
        }
        for latency in latencies where matches > 0 {
            for rival in EvalRunner.Rival.allCases {
                report.addMatches(
                    matchSessions.filter { $0.0.latency == latency && $0.0.rival == rival }.map(\.1), rival: rival,
                    latency: latency)
            }
            report.addPredictions(
                matchSessions.filter { $0.0.latency == latency }.compactMap(\.1.probe), latency: latency)
        }
        if curveMatches > 0 {
            report.addWinCurve(
                levels.map { level in (level.rawValue, curveMatchSessions.filter { $0.0.level == level }.map(\.1)) },
                rival: Self.curveRival, latency: curveLatency)
        }
        report.parallelMatches = parallel
        report.addDecisions(shotSessions.map(\.1.decisionNanos) + matchSessions.map(\.1.decisionNanos))
        report.addEndings(shots: allShots.map(\.1.ended), matches: allMatches.map(\.1.ended))
        report.addLateness(
            shotSessions.map(\.1.lateNanos) + curveSessions.map(\.1.lateNanos) + matchSessions.map(\.1.lateNanos)
                + curveMatchSessions.map(\.1.lateNanos))
        report.checkTargets()
        return report
    }

    package struct ShotJob: Sendable {
        var row: Int
        var shots: Int
        var configuration: OpponentConfiguration
        var latency: Int
        /// A difficulty-curve session (`row` is then the preset's index).
        var curve: Bool

        init(_ row: Int, _ shots: Int, _ configuration: OpponentConfiguration, _ latency: Int, curve: Bool) {
            self.row = row
            self.shots = shots
            self.configuration = configuration
            self.latency = latency
            self.curve = curve
        }
    }

    package struct MatchJob: Sendable {
        var latency: Int
        var rival: EvalRunner.Rival
        /// A win-curve match of this preset; `nil` for the plan's own difficulty.
        var level: Opponent.Difficulty?
    }

    private func playShots(_ jobs: [ShotJob], runner: EvalRunner) async throws -> [(ShotJob, EvalRunner.ShotSession)] {
        // A shot takes about a second and a half; a session that stalls is cut off well after that.
        let waves = (jobs.count + sessions - 1) / max(sessions, 1)
        let longest = jobs.map(\.shots).max() ?? 0
        let deadline = NIODeadline.now() + .seconds(Int64(waves * longest * 4 + 60))
        return try await Self.bounded(jobs, parallel: sessions) { number, job in
            let session = try await runner.shots(
                job.shots, configuration: job.configuration,
                link: EvalRunner.link(latencyMilliseconds: job.latency), session: number, deadline: deadline)
            return (job, session)
        }
    }

    /// Shots one session plays at most (about a minute of play); small runs use smaller sessions, at least 10 shots.
    package static let shotsPerSession = 50

    /// Sessions for `shots` shots of `size` each.
    package static func chunks(_ shots: Int, of size: Int) -> Int { max(1, (shots + size - 1) / size) }

    /// `total` split into `parts` near-equal positive counts (fewer parts when `total` is small).
    package static func split(_ total: Int, into parts: Int) -> [Int] {
        let parts = max(1, min(parts, total))
        return (0..<parts).map { total / parts + ($0 < total % parts ? 1 : 0) }
    }

    /// Runs `body` for every job, at most `parallel` at once, and returns the results in completion order.
    package static func bounded<Job: Sendable, Output: Sendable>(
        _ jobs: [Job], parallel: Int, _ body: @escaping @Sendable (Int, Job) async throws -> Output
    ) async throws -> [Output] {
        try await withThrowingTaskGroup(of: Output.self) { group in
            var results: [Output] = []
            var next = 0
            while next < jobs.count, next < parallel {
                let (number, job) = (next, jobs[next])
                group.addTask { try await body(number, job) }
                next += 1
            }
            while let result = try await group.next() {
                results.append(result)
                if next < jobs.count {
                    let (number, job) = (next, jobs[next])
                    group.addTask { try await body(number, job) }
                    next += 1
                }
            }
            return results
        }
    }
}
