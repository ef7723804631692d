import SkirmishGames
import SkirmishTelemetry

/// The sessions of the baselines at one latency row, faced with the same shots as the AI.
package struct ShotBaselines: Sendable {
    /// The paddle that does not move (played once for every row: it sends nothing a link could change).
    var still: [EvalRunner.ShotSession]
    /// The AI with prediction off, behind the row's link.
    var noPrediction: [EvalRunner.ShotSession]
    /// The ported Robot Air Hockey Challenge baseline, behind the row's link.
    var kalman: [EvalRunner.ShotSession]
}

extension EvalReport {
    /// What a save is, as the report states it.
    package static let saveDefinitionText =
        "a save is the puck stopped (slower than 1 px/tick in the defender's half, all of it within the defender's "
        + "reach) or returned (over the centre line moving away after the defender touched it); a goal is the puck "
        + "in the defender's goal; a shot neither after 300 ticks (5 s) is a timeout, not a save; judged by the "
        + "server on its authoritative table"
    /// How the intervals are made, as the report states it.
    package static let intervalText =
        "95 % intervals are session-clustered percentile bootstraps: 2,000 resamples of whole shot sessions "
        + "(about 50 shots each) with replacement, seeded, never narrower than Wilson below 10 sessions; a session's "
        + "shots are not independent"

    /// A save rate with its session-clustered bootstrap interval.
    package struct Rate: Codable, Sendable {
        var shots: Int
        var saved: Int
        var saveRate: Double
        var interval95Low: Double
        var interval95High: Double
        /// Sessions the interval resampled.
        var sessions: Int
    }

    package struct ShotRow: Codable, Sendable {
        var latencyMs: Int
        /// `all`, or `0` or `1` side-wall bounces.
        var bounces: String
        /// The AI's saves; timeouts count as shots that were not saved.
        var ai: Rate
        var stopped: Int
        var returned: Int
        var goals: Int
        var timeouts: Int
        /// Paddle centre to puck centre at the tick the puck crossed the defence line (``SkirmishGames/ShotReferee``).
        var interceptErrorPx: Percentiles
        /// The share of these shots any paddle could meet on the defence line in time at this latency, starting at
        /// the AI's home spot when its answer to the serve could first act (`PuckShot.reachable`): the ceiling of
        /// the intercept error's percentiles.
        var reachable: Double?
        /// Paddle centre to the puck's line of travel at the first contact, over the shots the AI touched.
        var contactOffsetPx: Percentiles
        /// The baselines on the same shots (the ones the AI's sessions completed).
        var stillPaddle: Rate
        var noPrediction: Rate
        var kalman: Rate
    }

    package struct CurvePoint: Codable, Sendable {
        var difficulty: String
        var rate: Rate
        var timeouts: Int
        var interceptErrorP95Px: Double?
    }

    package struct Curve: Codable, Sendable {
        var latencyMs: Int
        var points: [CurvePoint]
        /// The still paddle on the same shots.
        var stillPaddle: Rate
        /// Whether the save rate never falls from easy to expert.
        package var monotone: Bool
    }

    /// A shot's identity across sessions: its session's series number and its number in the session.
    private struct ShotKey: Hashable {
        var series: Int
        var number: Int
    }

    private static func decided(_ sessions: [EvalRunner.ShotSession]) -> [(Int, OpponentProbe.Shot)] {
        sessions.flatMap { session in session.probe.shots.filter { $0.outcome != nil }.map { (session.series, $0) } }
    }

    /// Saves over `sessions`' decided shots that `keep` accepts, with the bootstrap interval over sessions.
    static func rate(_ sessions: [EvalRunner.ShotSession], seed: UInt64, keep: (Int, OpponentProbe.Shot) -> Bool)
        -> Rate
    {
        let clusters = sessions.map { session in
            let chosen = session.probe.shots.filter { $0.outcome != nil && keep(session.series, $0) }
            return ClusterBootstrap.Cluster(
                successes: chosen.filter { $0.saved == true }.count, trials: chosen.count)
        }
        let interval = ClusterBootstrap(seed: seed).interval(clusters)
        return Rate(
            shots: clusters.reduce(0) { $0 + $1.trials }, saved: clusters.reduce(0) { $0 + $1.successes },
            saveRate: interval.rate, interval95Low: interval.low, interval95High: interval.high,
            sessions: clusters.filter { $0.trials > 0 }.count)
    }

    // MARK: Building

    /// The AI's shots at one latency, per bounce count, with the baselines on the same shots.
    package mutating func addShots(_ sessions: [EvalRunner.ShotSession], latency: Int, baselines: ShotBaselines) {
        for (label, filter) in [
            ("all", { (_: OpponentProbe.Shot) in true }), ("0", { $0.bounces == 0 }), ("1", { $0.bounces == 1 }),
        ] as [(String, (OpponentProbe.Shot) -> Bool)] {
            let chosen = Self.decided(sessions).filter { filter($0.1) }
            let keys = Set(chosen.map { ShotKey(series: $0.0, number: $0.1.number) })
            let same = { (series: Int, shot: OpponentProbe.Shot) in
                keys.contains(ShotKey(series: series, number: shot.number))
            }
            var errors = Samples()
            var offsets = Samples()
            let delay = PuckShot.answerDelay(latency: Double(latency) / 1000)
            let inTime = chosen.filter {
                PuckShot.reachable(
                    $0.1.puck, line: ShotReferee.defenceLine, from: PuckShot.keeperSpot, delay: delay)
            }
            for (_, shot) in chosen {
                if let error = shot.interceptError { errors.add(error) }
                if let offset = shot.contactOffset { offsets.add(offset) }
            }
            func count(_ outcome: ShotReferee.Outcome) -> Int { chosen.filter { $0.1.outcome == outcome }.count }
            shots.append(
                ShotRow(
                    latencyMs: latency, bounces: label,
                    ai: Self.rate(sessions, seed: seed) { filter($1) }, stopped: count(.stopped),
                    returned: count(.returned), goals: count(.goal), timeouts: count(.timeout),
                    interceptErrorPx: Percentiles(errors),
                    reachable: chosen.isEmpty ? nil : Double(inTime.count) / Double(chosen.count),
                    contactOffsetPx: Percentiles(offsets),
                    stillPaddle: Self.rate(baselines.still, seed: seed, keep: same),
                    noPrediction: Self.rate(baselines.noPrediction, seed: seed, keep: same),
                    kalman: Self.rate(baselines.kalman, seed: seed, keep: same)))
        }
    }

    /// Each preset's saves at one latency, and the still paddle on the same shots.
    package mutating func addCurve(
        _ levels: [(String, [EvalRunner.ShotSession])], latency: Int, still: [EvalRunner.ShotSession]
    ) {
        var points: [CurvePoint] = []
        var keys = Set<ShotKey>()
        for (name, sessions) in levels {
            let all = Self.decided(sessions)
            for (series, shot) in all { keys.insert(ShotKey(series: series, number: shot.number)) }
            var errors = Samples()
            for (_, shot) in all { if let error = shot.interceptError { errors.add(error) } }
            points.append(
                CurvePoint(
                    difficulty: name, rate: Self.rate(sessions, seed: seed) { _, _ in true },
                    timeouts: all.filter { $0.1.outcome == .timeout }.count,
                    interceptErrorP95Px: errors.percentile(0.95)))
        }
        let monotone = zip(points, points.dropFirst()).allSatisfy { $0.rate.saveRate <= $1.rate.saveRate }
        let stillRate = Self.rate(still, seed: seed) { keys.contains(ShotKey(series: $0, number: $1.number)) }
        curve = Curve(latencyMs: latency, points: points, stillPaddle: stillRate, monotone: monotone)
    }

    // MARK: Targets

    /// The shot side's targets: expert saves at 150 ms, the physical intercept error at 150 ms, a monotone
    /// difficulty curve in saves, and a shot set the still paddle cannot stand in front of.
    package mutating func checkShotTargets() {
        let row150 = shots.first { $0.latencyMs == 150 && $0.bounces == "all" }
        var expert: Double?
        if difficulty == "expert", predicts, let row150 { expert = row150.ai.saveRate }
        if expert == nil, let curve, curve.latencyMs == 150 {
            expert = curve.points.first { $0.difficulty == "expert" }?.rate.saveRate
        }
        if let expert {
            targets.append(
                TargetCheck(name: "expert save rate at 150 ms", value: expert, goal: ">= 0.95", met: expert >= 0.95))
        }
        if let row150, let p95 = row150.interceptErrorPx.p95 {
            targets.append(
                TargetCheck(
                    name: "\(difficulty) physical intercept error p95 at 150 ms (px)", value: p95, goal: "< 20",
                    met: p95 < 20,
                    note: row150.reachable.map {
                        "reach: about \(percent($0)) of these shots could be met within 20 px of their crossing in "
                            + "time by any paddle, so a p95 under 20 px needs a reach of at least 95 %"
                    }))
        }
        if let curve {
            targets.append(
                TargetCheck(
                    name: "difficulty curve monotone in saves at \(curve.latencyMs) ms", value: curve.monotone ? 1 : 0,
                    goal: "== 1", met: curve.monotone))
        }
        if let still = shots.first(where: { $0.bounces == "all" })?.stillPaddle, still.shots > 0 {
            targets.append(
                TargetCheck(
                    name: "still paddle save rate (the shot set is hard enough)", value: still.saveRate,
                    goal: "<= 0.15", met: still.saveRate <= 0.15))
        }
    }

    // MARK: Output

    private func rateText(_ rate: Rate) -> String {
        rate.shots == 0 ? "–" : percent(rate.saveRate)
    }

    private func intervalText(_ rate: Rate) -> String {
        rate.shots == 0 ? "–" : "\(percent(rate.interval95Low))–\(percent(rate.interval95High))"
    }

    /// The shots table: per latency and bounce count, the AI's saves with the baselines beside them.
    func shotLines() -> [String] {
        var lines: [String] = []
        lines.append(
            "shots at the \(difficulty) AI\(predicts ? "" : " with prediction OFF") — \(saveDefinition)")
        lines.append(
            intervals + "; baselines on the same shots: a still paddle at the AI's home spot, the AI with "
                + "prediction off, the ported Robot Air Hockey Challenge Kalman baseline")
        lines.append(
            "intercept error (err): paddle centre to puck centre at the tick the puck crosses the defence line "
                + "(y = \(Int(defenceLine)); a puck already touched is taken where it would have been), from the server's table, px; "
                + "contact offset (off): paddle centre to the puck's line of travel at the first contact, px; "
                + "reach: about how many of the shots any paddle could meet within 20 px of their crossing in time, "
                + "starting from the AI's home spot when its answer to the serve could first act (the next "
                + "snapshot, two one-way latencies and a tick after it) at the server's 40 px/tick — the ceiling "
                + "of the error's p95")
        lines.append(
            pad("latency", 9) + pad("bounces", 8) + pad("shots", 6, left: true) + pad("saves", 9, left: true)
                + pad("95 % (sessions)", 16, left: true) + pad("stop/ret/goal/t-o", 19, left: true)
                + pad("err p50", 8, left: true) + pad("p95", 7, left: true) + pad("reach", 8, left: true)
                + pad("off p50", 8, left: true)
                + pad("p95", 6, left: true) + pad("still", 8, left: true)
                + pad("no pred", 9, left: true) + pad("kalman", 8, left: true))
        for row in shots {
            lines.append(
                pad(row.bounces == "all" ? "\(row.latencyMs) ms" : "", 9) + pad(row.bounces, 8)
                    + pad("\(row.ai.shots)", 6, left: true) + pad(rateText(row.ai), 9, left: true)
                    + pad(intervalText(row.ai), 16, left: true)
                    + pad("\(row.stopped)/\(row.returned)/\(row.goals)/\(row.timeouts)", 19, left: true)
                    + pad(number(row.interceptErrorPx.p50), 8, left: true)
                    + pad(number(row.interceptErrorPx.p95), 7, left: true)
                    + pad(row.reachable.map(percent) ?? "–", 8, left: true)
                    + pad(number(row.contactOffsetPx.p50), 8, left: true)
                    + pad(number(row.contactOffsetPx.p95), 6, left: true)
                    + pad(rateText(row.stillPaddle), 8, left: true) + pad(rateText(row.noPrediction), 9, left: true)
                    + pad(rateText(row.kalman), 8, left: true))
        }
        for row in shots where row.bounces == "all" {
            lines.append(
                "\(difficulty) \(row.latencyMs) ms: saves \(rateText(row.ai)) [\(intervalText(row.ai))] · still paddle "
                    + "\(rateText(row.stillPaddle)) · no prediction \(rateText(row.noPrediction)) [\(intervalText(row.noPrediction))] · kalman "
                    + "\(rateText(row.kalman)) [\(intervalText(row.kalman))] · timeouts \(row.timeouts)")
        }
        return lines
    }

    /// The difficulty curve with the still paddle beside it.
    func curveLines() -> [String] {
        guard let curve else { return [] }
        var lines = ["", "difficulty curve: saves at \(curve.latencyMs) ms (same shots; session-clustered 95 %)"]
        for point in curve.points {
            lines.append(
                pad(point.difficulty, 9) + pad("\(point.rate.saved)/\(point.rate.shots)", 10, left: true)
                    + pad(rateText(point.rate), 9, left: true) + pad(intervalText(point.rate), 17, left: true)
                    + pad("timeouts \(point.timeouts)", 14, left: true)
                    + pad("intercept p95 \(number(point.interceptErrorP95Px)) px", 26, left: true))
        }
        lines.append(
            "still paddle on the same shots: \(rateText(curve.stillPaddle)) [\(intervalText(curve.stillPaddle))]")
        lines.append(
            curve.monotone
                ? "difficulty curve is monotone: every preset saves at least as many as the one below it"
                : "difficulty curve is NOT monotone: a harder preset saved fewer shots than an easier one")
        return lines
    }
}
