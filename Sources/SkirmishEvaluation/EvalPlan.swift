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
    /// Whether the AI under test predicts (`--no-prediction` turns it off, to reproduce that baseline alone).
    package var predicts = true
    /// Seconds of lock-step play per rival and latency for the attack's headroom (``AttackHeadroom``); 0 skips it.
    package var headroomSeconds = 0
    /// Matches of every preset, and of the adaptive AI, against every human-like level
    /// (``SkirmishOpponent/HumanPlayer``) at ``humanLatency``: the difficulty matrix and its bands
    /// (``DifficultyBand``); 0 skips it.
    package var humanMatches = 0
    /// Whether the presets play the human-like levels too, or only the adaptive AI (to tune it without replaying
    /// the presets).
    package var humanPresets = true
    /// The one-way latency of the difficulty matrix, ms: a home connection's.
    package var humanLatency = 50

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

    /// Every shot the run plays: each latency row's AI and its no-prediction and Kalman baselines, the still paddle
    /// once (it ignores the link), and the difficulty curve.
    package var totalShots: Int {
        shots * latencies.count * ShotKind.perLatency.count + stillSessionShots.reduce(0, +)
            + curveShots * Opponent.Difficulty.allCases.count
    }

    /// The still paddle's sessions: session `k` plays the most shots any row's session `k` does, so every row finds
    /// its shots there.
    var stillSessionShots: [Int] {
        let main = Self.split(shots, into: Self.chunks(shots, of: Self.shotsPerSession))
        let curve =
            curveShots > 0 ? Self.split(curveShots, into: Self.chunks(curveShots, of: Self.shotsPerSession)) : []
        return (0..<max(main.count, curve.count)).map {
            max($0 < main.count ? main[$0] : 0, $0 < curve.count ? curve[$0] : 0)
        }
    }
    package var totalMatches: Int {
        matches * EvalRunner.Rival.scripted.count * latencies.count + curveMatches * Opponent.Difficulty.allCases.count
            + humanMatches * ((humanPresets ? Opponent.Difficulty.allCases.count : 0) + 1)
            * EvalRunner.Rival.humans.count
    }

    package func run(with runner: EvalRunner) async throws -> EvalReport {
        var report = EvalReport(difficulty: difficulty.rawValue, seed: seed, matchSeconds: matchSeconds)
        report.predicts = predicts
        var underTest = OpponentConfiguration(difficulty: difficulty)
        underTest.predicts = predicts
        let configuration = underTest
        let shotJobs = shotJobs(configuration: configuration)
        let levels = Opponent.Difficulty.allCases
        var matchJobs: [MatchJob] = []
        for latency in latencies where matches > 0 {
            for rival in EvalRunner.Rival.scripted {
                for _ in 0..<matches { matchJobs.append(MatchJob(latency: latency, rival: rival, level: nil)) }
            }
        }
        for _ in 0..<curveMatches {
            for level in levels {
                matchJobs.append(MatchJob(latency: curveLatency, rival: Self.curveRival, level: level))
            }
        }
        for _ in 0..<humanMatches {
            for level in levels where humanPresets {
                for human in EvalRunner.Rival.humans {
                    matchJobs.append(MatchJob(latency: humanLatency, rival: human, level: level))
                }
            }
            for human in EvalRunner.Rival.humans {
                matchJobs.append(MatchJob(latency: humanLatency, rival: human, level: nil, adaptive: true))
            }
        }
        // Shots and matches run side by side, each within its own bound on sessions at once: enough to finish in a
        // few minutes, few enough that the event loops keep their schedule (the report shows their lateness).
        let limit = Duration.seconds(matchSeconds)
        async let shotResults = playShots(shotJobs, runner: runner)
        async let matchResults = Self.bounded(matchJobs, parallel: parallel) { number, job in
            let session = try await runner.match(
                configuration: job.level.map { OpponentConfiguration(difficulty: $0) } ?? configuration,
                adaptive: job.adaptive, rival: job.rival,
                link: EvalRunner.link(latencyMilliseconds: job.latency), session: number, limit: limit)
            return (job, session)
        }
        let (allShots, allMatches) = try await (shotResults, matchResults)
        let matchSessions = allMatches.filter { $0.1.played && $0.0.level == nil && $0.0.rival.skill == nil }
        let curveMatchSessions = allMatches.filter {
            $0.1.played && $0.0.level != nil && $0.0.rival.skill == nil
        }
        let humanSessions = allMatches.filter { $0.1.played && $0.0.rival.skill != nil && !$0.0.adaptive }
        let adaptiveSessions = allMatches.filter { $0.1.played && $0.0.adaptive }
        let shotSessions = allShots.filter { $0.0.kind == .ai }.map(\.1)
        let still = allShots.filter { $0.0.kind == .still }.map(\.1)
        for (row, latency) in latencies.enumerated() {
            func sessions(_ kind: ShotKind) -> [EvalRunner.ShotSession] {
                allShots.filter { $0.0.kind == kind && $0.0.row == row }.map(\.1)
            }
            report.addShots(
                sessions(.ai), latency: latency,
                baselines: ShotBaselines(still: still, noPrediction: sessions(.noPrediction), kalman: sessions(.kalman))
            )
        }
        if curveShots > 0 {
            report.addCurve(
                Opponent.Difficulty.allCases.enumerated().map { row, level in
                    (level.rawValue, allShots.filter { $0.0.kind == .curve && $0.0.row == row }.map(\.1))
                },
                latency: curveLatency, still: still)
        }
        for latency in latencies where matches > 0 {
            for rival in EvalRunner.Rival.scripted {
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
        if humanMatches > 0 {
            report.addHumanMatrix(
                levels.map { level in
                    (
                        level.rawValue,
                        EvalRunner.Rival.humans.map { human in
                            (
                                human.rawValue,
                                humanSessions.filter { $0.0.level == level && $0.0.rival == human }.map(\.1)
                            )
                        }
                    )
                }, latency: humanLatency)
            report.addAdaptive(
                EvalRunner.Rival.humans.map { human in
                    (human.rawValue, adaptiveSessions.filter { $0.0.rival == human }.map(\.1))
                })
        }
        if headroomSeconds > 0 {
            // After the real-time sessions, so its CPU work does not make their links worse than emulated.
            let progress = runner.progress
            report.headroom = await AttackHeadroom(seconds: headroomSeconds, seed: seed, configuration: configuration)
                .measureAll(latencies: latencies, eachSecond: { progress.add(.headroomSeconds, 1) })
        }
        report.parallelMatches = parallel
        report.addDecisions(shotSessions.map(\.decisionNanos) + matchSessions.map(\.1.decisionNanos))
        report.addEndings(shots: allShots.map(\.1.ended), matches: allMatches.map(\.1.ended))
        // Every session's clients share the loop: all of them say how late it ran.
        report.addLateness(allShots.map(\.1.lateNanos) + allMatches.filter(\.1.played).map(\.1.lateNanos))
        report.checkTargets()
        return report
    }

    /// Who a shot session measures.
    package enum ShotKind: Sendable, Hashable {
        /// The AI under test at a latency row.
        case ai
        /// Its baselines at the same row, on the same shots.
        case noPrediction, kalman
        /// The still paddle, once for every row (it sends nothing the link could change).
        case still
        /// A difficulty preset at the curve's latency.
        case curve

        /// What every latency row plays.
        static let perLatency: [ShotKind] = [.ai, .noPrediction, .kalman]
    }

    package struct ShotJob: Sendable {
        /// The latency row, or the preset's index on the curve.
        var row: Int
        var shots: Int
        var defender: ShotDefender
        var latency: Int
        var kind: ShotKind
        /// The session's number in its row: the same number serves the same shots.
        var series: Int
    }

    /// The shot sessions of the plan, the rows interleaved so every row progresses together. Session `k` of every row
    /// has the same series number and so the same shots (``stillSessionShots`` for the still paddle's).
    func shotJobs(configuration: OpponentConfiguration) -> [ShotJob] {
        let perSession = Self.shotsPerSession
        let main = Self.split(shots, into: Self.chunks(shots, of: perSession))
        let curve = curveShots > 0 ? Self.split(curveShots, into: Self.chunks(curveShots, of: perSession)) : []
        var rows: [[ShotJob]] = []
        let blind = configuration.withoutPrediction
        for (row, latency) in latencies.enumerated() {
            for kind in ShotKind.perLatency {
                let defender: ShotDefender =
                    switch kind {
                    case .noPrediction: .ai(blind)
                    case .kalman: .kalman
                    default: .ai(configuration)
                    }
                rows.append(
                    main.enumerated().map {
                        ShotJob(row: row, shots: $1, defender: defender, latency: latency, kind: kind, series: $0)
                    })
            }
        }
        rows.append(
            stillSessionShots.enumerated().map {
                ShotJob(row: 0, shots: $1, defender: .stillPaddle, latency: 0, kind: .still, series: $0)
            })
        for (row, level) in Opponent.Difficulty.allCases.enumerated() where !curve.isEmpty {
            let preset = ShotDefender.ai(OpponentConfiguration(difficulty: level))
            rows.append(
                curve.enumerated().map {
                    ShotJob(row: row, shots: $1, defender: preset, latency: curveLatency, kind: .curve, series: $0)
                })
        }
        var jobs: [ShotJob] = []
        for index in 0..<(rows.map(\.count).max() ?? 0) {
            for row in rows where index < row.count { jobs.append(row[index]) }
        }
        return jobs
    }

    package struct MatchJob: Sendable {
        var latency: Int
        var rival: EvalRunner.Rival
        /// A win-curve or human-matrix match of this preset; `nil` for the plan's own difficulty.
        var level: Opponent.Difficulty?
        /// A human-matrix match of the adaptive AI (``SkirmishOpponent/AdaptiveOpponent``).
        var adaptive = false
    }

    private func playShots(_ jobs: [ShotJob], runner: EvalRunner) async throws -> [(ShotJob, EvalRunner.ShotSession)] {
        // A shot takes about a second and a half; a session that stalls is cut off well after that.
        let waves = (jobs.count + sessions - 1) / max(sessions, 1)
        let longest = jobs.map(\.shots).max() ?? 0
        let deadline = NIODeadline.now() + .seconds(Int64(waves * longest * 4 + 60))
        return try await Self.bounded(jobs, parallel: sessions) { number, job in
            let session = try await runner.shots(
                job.shots, defender: job.defender, series: job.series,
                link: EvalRunner.link(latencyMilliseconds: job.latency), session: number, deadline: deadline)
            return (job, session)
        }
    }

    /// Shots one session plays at most (about a minute of play); a row's last session plays what is left.
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
