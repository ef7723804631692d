import Foundation
import SkirmishGames
import SkirmishOpponent
import SkirmishScript
import SkirmishTelemetry

/// The figures of an `ai-eval` run: the table it prints and the JSON it writes.
package struct EvalReport: Codable, Sendable {
    package struct Percentiles: Codable, Sendable {
        var count: Int
        var p50: Double?
        var p95: Double?
        var p99: Double?

        init(_ samples: Samples) {
            count = samples.count
            p50 = samples.percentile(0.5)
            p95 = samples.percentile(0.95)
            p99 = samples.percentile(0.99)
        }
    }

    package struct PredictionRow: Codable, Sendable {
        var latencyMs: Int
        var horizonMs: Int
        var errorPx: Percentiles
        /// Share of predictions more than 2 px off (a misprediction, DESIGN §4).
        var mispredictionRate: Double
    }

    package struct MatchRow: Codable, Sendable {
        var latencyMs: Int
        var rival: String
        var matches: Int
        var wins: Int
        var draws: Int
        var losses: Int
        /// Matches that reached 7 goals before the time limit.
        var completed: Int
        /// (wins + draws / 2) / matches.
        var winRate: Double
        var goalsFor: Int
        var goalsAgainst: Int
        var meanSeconds: Double
        /// The median time to 7 goals, a match cut off by the time limit counting as longer than any; `nil` when
        /// fewer than half the matches reached 7.
        var medianSecondsToSeven: Double?
        /// Wilson 95 % interval of the share of matches won outright.
        var winWilson95Low: Double
        var winWilson95High: Double
    }

    /// Every preset against every human-like level (``SkirmishOpponent/HumanPlayer``) at one latency: how the
    /// difficulty presets play against people, in goals both ways.
    package struct HumanMatrix: Codable, Sendable {
        package struct Cell: Codable, Sendable {
            var difficulty: String
            var result: MatchRow
        }

        var latencyMs: Int
        /// Preset by preset, each against every level (the level is the row's `rival`).
        var cells: [Cell]
        /// The levels against which no preset wins less often than the one below it.
        var monotoneAgainst: [String]
    }

    /// Win rate of each preset against one rival: the match side of the difficulty curve.
    package struct WinCurve: Codable, Sendable {
        package struct Point: Codable, Sendable {
            var difficulty: String
            var result: MatchRow
        }

        var latencyMs: Int
        var rival: String
        var points: [Point]
        /// Whether the win rate never falls from easy to expert.
        package var monotone: Bool
    }

    package struct DecisionTime: Codable, Sendable {
        var decisions: Int
        var p50Us: Double?
        var p99Us: Double?
        var maxUs: Double?
    }

    /// How late the AI clients' ticks ran: the event loop's own delay on top of the emulated link.
    package struct Lateness: Codable, Sendable {
        var ticks: Int
        var p50Ms: Double?
        var p99Ms: Double?
        var maxMs: Double?
    }

    package struct TargetCheck: Codable, Sendable {
        var name: String
        var value: Double?
        var goal: String
        var met: Bool
        /// What bounds the figure, printed on a line of its own under the check.
        var note: String? = nil
    }

    package var difficulty: String
    package var seed: UInt64
    /// The defence line of the intercept error, puck-centre y in the defender's frame (reports before it was
    /// recorded used 400).
    package var defenceLine = ShotReferee.defenceLine
    package var matchSeconds: Int
    package var link = "one-way latency ±20 % jitter (at least 1 ms), 2 % loss, each direction"
    /// What a save is (``SkirmishGames/ShotReferee``), and how the intervals are made.
    package var saveDefinition = EvalReport.saveDefinitionText
    /// How the save-rate intervals are made (session-clustered bootstraps).
    package var intervals = EvalReport.intervalText
    /// Whether the AI under test predicted (`--no-prediction` turns it off).
    package var predicts = true
    package var shots: [ShotRow] = []
    package var predictions: [PredictionRow] = []
    package var matches: [MatchRow] = []
    package var decisionTime = DecisionTime(decisions: 0)
    package var tickLateness = Lateness(ticks: 0)
    package var curve: Curve?
    package var winCurve: WinCurve?
    package var humans: HumanMatrix?
    /// Matches played at once on the one client loop (and the one server loop).
    package var parallelMatches = 0
    package var targets: [TargetCheck] = []
    /// Sessions that stopped before their shots were played or their match was decided, by reason.
    package var cutShort: [String: Int] = [:]
    /// The attack's headroom per latency and rival (``AttackHeadroom``), when measured.
    package var headroom: [AttackHeadroom.Row] = []
    private var decisionSamples = Samples()
    private var lateSamples = Samples()

    private enum CodingKeys: String, CodingKey {
        case difficulty, seed, matchSeconds, link, saveDefinition, intervals, predicts, shots, predictions, matches,
            decisionTime, tickLateness, curve, winCurve, humans, parallelMatches, targets, cutShort, headroom
    }

    package init(difficulty: String, seed: UInt64, matchSeconds: Int) {
        self.difficulty = difficulty
        self.seed = seed
        self.matchSeconds = matchSeconds
    }

    // MARK: Building

    package mutating func addMatches(_ sessions: [EvalRunner.MatchSession], rival: EvalRunner.Rival, latency: Int) {
        guard let row = Self.matchRow(sessions, rival: rival, latency: latency) else { return }
        matches.append(row)
    }

    /// The win rate of each preset against `rival` at `latency`; monotone when no preset wins less than the one
    /// below it.
    package mutating func addWinCurve(
        _ levels: [(String, [EvalRunner.MatchSession])], rival: EvalRunner.Rival, latency: Int
    ) {
        var points: [WinCurve.Point] = []
        for (name, sessions) in levels {
            guard let row = Self.matchRow(sessions, rival: rival, latency: latency) else { continue }
            points.append(WinCurve.Point(difficulty: name, result: row))
        }
        let monotone = zip(points, points.dropFirst()).allSatisfy { $0.result.winRate <= $1.result.winRate }
        winCurve = WinCurve(latencyMs: latency, rival: rival.rawValue, points: points, monotone: monotone)
    }

    /// Each preset's matches against each human-like level at `latency`, presets from easiest.
    package mutating func addHumanMatrix(
        _ presets: [(String, [(String, [EvalRunner.MatchSession])])], latency: Int
    ) {
        var cells: [HumanMatrix.Cell] = []
        for (preset, levels) in presets {
            for (level, sessions) in levels {
                guard let rival = EvalRunner.Rival(rawValue: level),
                    let row = Self.matchRow(sessions, rival: rival, latency: latency)
                else { continue }
                cells.append(HumanMatrix.Cell(difficulty: preset, result: row))
            }
        }
        let levels = Array(Set(cells.map(\.result.rival))).sorted {
            (EvalRunner.Rival.humans.firstIndex(of: EvalRunner.Rival(rawValue: $0) ?? .casual) ?? 0)
                < (EvalRunner.Rival.humans.firstIndex(of: EvalRunner.Rival(rawValue: $1) ?? .casual) ?? 0)
        }
        let monotone = levels.filter { level in
            let rates = cells.filter { $0.result.rival == level }.map(\.result.winRate)
            return zip(rates, rates.dropFirst()).allSatisfy { $0 <= $1 }
        }
        humans = HumanMatrix(latencyMs: latency, cells: cells, monotoneAgainst: monotone)
    }

    static func matchRow(_ sessions: [EvalRunner.MatchSession], rival: EvalRunner.Rival, latency: Int) -> MatchRow? {
        guard !sessions.isEmpty else { return nil }
        let wins = sessions.filter { $0.myScore > $0.theirScore }.count
        let losses = sessions.filter { $0.myScore < $0.theirScore }.count
        let draws = sessions.count - wins - losses
        let toSeven = sessions.map { $0.completed ? $0.seconds : .infinity }.sorted()
        let median = toSeven[(toSeven.count - 1) / 2]
        let interval = Proportion(successes: wins, trials: sessions.count).wilson95
        return MatchRow(
            latencyMs: latency, rival: rival.rawValue, matches: sessions.count, wins: wins, draws: draws,
            losses: losses, completed: sessions.filter(\.completed).count,
            winRate: (Double(wins) + Double(draws) / 2) / Double(sessions.count),
            goalsFor: sessions.reduce(0) { $0 + $1.myScore },
            goalsAgainst: sessions.reduce(0) { $0 + $1.theirScore },
            meanSeconds: sessions.reduce(0) { $0 + $1.seconds } / Double(sessions.count),
            medianSecondsToSeven: median.isFinite ? median : nil, winWilson95Low: interval.low,
            winWilson95High: interval.high)
    }

    package mutating func addPredictions(_ probes: [OpponentProbe], latency: Int) {
        for (index, horizon) in OpponentProbe.horizons.enumerated() {
            var errors = Samples()
            for probe in probes { errors.merge(probe.predictionErrors[index]) }
            let off = errors.values.filter { $0 > 2 }.count
            predictions.append(
                PredictionRow(
                    latencyMs: latency, horizonMs: horizon * 1000 / 60, errorPx: Percentiles(errors),
                    mispredictionRate: errors.count == 0 ? 0 : Double(off) / Double(errors.count)))
        }
    }

    package mutating func addDecisions(_ samples: [Samples]) {
        for sample in samples { decisionSamples.merge(sample) }
        decisionTime = DecisionTime(
            decisions: decisionSamples.count, p50Us: decisionSamples.percentile(0.5).map { $0 / 1000 },
            p99Us: decisionSamples.percentile(0.99).map { $0 / 1000 },
            maxUs: decisionSamples.percentile(1).map { $0 / 1000 })
    }

    /// Notes sessions that ended for another reason than finishing: shot sessions that did not play all their
    /// shots, matches that neither reached 7 goals nor the time limit.
    package mutating func addEndings(shots: [String], matches: [String]) {
        for reason in shots where reason != "done" { cutShort["shots: \(reason)", default: 0] += 1 }
        for reason in matches where reason != "over" && reason != "time limit" {
            cutShort["match: \(reason)", default: 0] += 1
        }
    }

    package mutating func addLateness(_ samples: [Samples]) {
        for sample in samples { lateSamples.merge(sample) }
        tickLateness = Lateness(
            ticks: lateSamples.count, p50Ms: lateSamples.percentile(0.5).map { $0 / 1e6 },
            p99Ms: lateSamples.percentile(0.99).map { $0 / 1e6 }, maxMs: lateSamples.percentile(1).map { $0 / 1e6 })
    }

    /// The issue's targets, at 150 ms when that row was played.
    package mutating func checkTargets() {
        targets = []
        checkShotTargets()
        // Matches (issue: the AI attacks): the chaser, the defender and its own no-prediction self beaten in >= 95 %
        // of matches, with enough of them that the Wilson interval's low end clears 90 %, and to 7 goals within 3
        // minutes at the median. The Kalman baseline's matches are reported beside them, not a target.
        for row in matches where EvalRunner.Rival(rawValue: row.rival)?.isTarget ?? true {
            let place = "vs \(row.rival) at \(row.latencyMs) ms"
            let played = row.matches
            targets.append(
                TargetCheck(
                    name: "\(difficulty) win rate \(place)", value: row.winRate, goal: ">= 0.95",
                    met: row.winRate >= 0.95))
            targets.append(
                TargetCheck(
                    name: "\(difficulty) wins \(place), Wilson 95 % low end", value: row.winWilson95Low,
                    // Even a perfect record needs 35 matches for the low end to clear 0.90: say so when there are fewer.
                    goal: played >= 35 ? ">= 0.90" : ">= 0.90; \(played) matches cannot reach it, 35 can (--matches)",
                    met: row.winWilson95Low >= 0.9))
            targets.append(
                TargetCheck(
                    name: "median match time to 7 goals \(place) (s)", value: row.medianSecondsToSeven,
                    goal: "<= 180", met: (row.medianSecondsToSeven ?? .infinity) <= 180))
        }
        if let p99 = decisionTime.p99Us {
            targets.append(TargetCheck(name: "decision time p99 (µs)", value: p99, goal: "< 20", met: p99 < 20))
        }
        if let winCurve {
            targets.append(
                TargetCheck(
                    name: "difficulty curve monotone in win rate vs \(winCurve.rival) at \(winCurve.latencyMs) ms",
                    value: winCurve.monotone ? 1 : 0, goal: "== 1", met: winCurve.monotone))
        }
    }

    // MARK: Output

    package func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    package func tableLines() -> [String] {
        var lines: [String] = []
        lines.append("ai-eval: the \(difficulty) AI over the real protocol (seed \(seed)); links: \(link)")
        lines.append("")
        lines += shotLines()
        if !predictions.isEmpty {
            lines.append("")
            lines.append("prediction error of the puck in matches (px; misprediction = more than 2 px)")
            lines.append(
                pad("latency", 9) + pad("horizon", 9) + pad("samples", 9, left: true) + pad("p50", 8, left: true)
                    + pad("p95", 8, left: true) + pad("p99", 8, left: true) + pad("> 2 px", 9, left: true))
            for row in predictions {
                lines.append(
                    pad(row.horizonMs == 50 ? "\(row.latencyMs) ms" : "", 9) + pad("\(row.horizonMs) ms", 9)
                        + pad("\(row.errorPx.count)", 9, left: true) + pad(number(row.errorPx.p50), 8, left: true)
                        + pad(number(row.errorPx.p95), 8, left: true) + pad(number(row.errorPx.p99), 8, left: true)
                        + pad(percent(row.mispredictionRate), 9, left: true))
            }
        }
        if !matches.isEmpty {
            lines.append("")
            lines.append(
                "matches (to 7 goals or \(matchSeconds) s, then the higher score; a draw counts half; "
                    + "\(parallelMatches) at once on one client loop; kalman, the field's reference, is reported "
                    + "and not a target)")
            lines += matchLines(matches.map { ("\($0.latencyMs) ms", $0) }, first: "latency")
        }
        lines.append("")
        lines.append(
            "decision time per tick: p50 \(number(decisionTime.p50Us, 2)) µs, p99 \(number(decisionTime.p99Us, 2)) "
                + "µs, max \(number(decisionTime.maxUs, 1)) µs over \(decisionTime.decisions) decisions "
                + "(wall clock around each decision, on a loop shared with every client)")
        lines.append(
            "tick lateness of the AI clients: p50 \(number(tickLateness.p50Ms, 2)) ms, p99 \(number(tickLateness.p99Ms, 2)) "
                + "ms, max \(number(tickLateness.maxMs, 1)) ms")
        if !cutShort.isEmpty {
            let reasons = cutShort.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
            lines.append("WARNING: sessions cut short (their figures count only what was played): \(reasons)")
        }
        if let p99 = tickLateness.p99Ms, p99 > 5 {
            lines.append(
                "WARNING: the clients' event loop ran more than 5 ms late at p99 — the machine was busy, so the links "
                    + "were worse than emulated and these figures understate the AI; rerun with fewer --sessions or "
                    + "--parallel, or on a quieter machine")
        }
        lines += curveLines()
        if let winCurve {
            lines.append("")
            lines.append("difficulty curve: win rate against \(winCurve.rival) at \(winCurve.latencyMs) ms")
            lines += matchLines(winCurve.points.map { ($0.difficulty, $0.result) }, first: "preset")
            lines.append(
                winCurve.monotone
                    ? "difficulty curve is monotone in win rate: every preset wins at least as often as the one below it"
                    : "difficulty curve is NOT monotone in win rate: a harder preset won less often than an easier one")
        }
        if let humans, !humans.cells.isEmpty {
            lines.append("")
            lines.append(
                "against human-like players at \(humans.latencyMs) ms (a model of a person with a mouse: reaction "
                    + "delay, aim error, a hand's speed; reported, no target yet): goals are the AI's–the player's")
            lines += matchLines(humans.cells.map { ($0.difficulty, $0.result) }, first: "preset")
            let levels = Array(Set(humans.cells.map(\.result.rival)))
            let bent = levels.filter { !humans.monotoneAgainst.contains($0) }.sorted()
            lines.append(
                bent.isEmpty
                    ? "against every level, no preset wins less often than the one below it"
                    : "NOT monotone against \(bent.joined(separator: ", ")): a harder preset won less often there")
        }
        lines += headroomLines()
        if !targets.isEmpty {
            lines.append("")
            for target in targets {
                lines.append(
                    "\(target.met ? "PASS" : "MISS") \(target.name): \(number(target.value, 3)) (target \(target.goal))"
                )
                if let note = target.note { lines.append("     " + note) }
            }
        }
        return lines
    }

    /// The headroom table: how often some strike would have scored where the AI began one.
    func headroomLines() -> [String] {
        guard !headroom.isEmpty else { return [] }
        var lines = [
            "",
            "attack headroom (lock-step, the \(difficulty) AI against each rival behind the row's simulated link): at "
                + "each moment the AI began a strike, \(AttackHeadroom.candidates) other strikes were played out "
                + "against a copy of the rival and the table; open = some strike scored there (a lower bound on what "
                + "aim could do); clean = the rival's paddle never hit the puck between the moment and the goal (the "
                + "rest went in off it: deflections and fumbles, which in the copies are found by playing the rival's "
                + "exact future)",
            pad("latency", 9) + pad("rival", 15) + pad("moments", 9, left: true) + pad("AI scored", 11, left: true)
                + pad("clean", 7, left: true) + pad("open", 7, left: true) + pad("open %", 9, left: true)
                + pad("clean", 7, left: true) + pad("strikes that score", 20, left: true)
                + pad("clean", 9, left: true),
        ]
        var previous: Int?
        for row in headroom {
            let open = Proportion(successes: row.open, trials: row.moments).rate
            let scoring = Proportion(successes: row.scoringStrikes, trials: row.strikes).rate
            let clean = Proportion(successes: row.cleanStrikes, trials: row.strikes).rate
            lines.append(
                pad(row.latencyMs == previous ? "" : "\(row.latencyMs) ms", 9) + pad(row.rival, 15)
                    + pad("\(row.moments)", 9, left: true) + pad("\(row.aiScored)", 11, left: true)
                    + pad("\(row.aiScoredClean)", 7, left: true) + pad("\(row.open)", 7, left: true)
                    + pad(percent(open), 9, left: true) + pad("\(row.cleanOpen)", 7, left: true)
                    + pad(fixed(scoring * 100, 2) + " %", 20, left: true)
                    + pad(fixed(clean * 100, 2) + " %", 9, left: true))
            previous = row.latencyMs
        }
        func cells(_ rows: [AttackHeadroom.Row]) -> String {
            rows.map { "\($0.rival) at \($0.latencyMs) ms" }.joined(separator: ", ")
        }
        let closed = headroom.filter { $0.moments > 0 && $0.open == 0 && $0.aiScored == 0 }
        if !closed.isEmpty {
            lines.append(
                "not one strike tried, nor the AI's own, scored against " + cells(closed)
                    + ": there the table and the latency, not the aim, keep these players from being beaten to 7")
        }
        let unclean = headroom.filter {
            $0.cleanOpen == 0 && $0.aiScoredClean == 0 && ($0.open > 0 || $0.aiScored > 0)
        }
        if !unclean.isEmpty {
            lines.append(
                "no strike went in untouched against " + cells(unclean)
                    + ": every goal found there came off the rival's own paddle")
        }
        return lines
    }

    func percent(_ value: Double) -> String { fixed(value * 100, 1) + " %" }
    /// A table of match rows, each with its group (latency or preset), shown on the first row of the group.
    private func matchLines(_ rows: [(group: String, row: MatchRow)], first: String) -> [String] {
        var lines = [
            pad(first, 9) + pad("rival", 15) + pad("W-D-L", 10, left: true) + pad("win rate", 10, left: true)
                + pad("Wilson 95 % (wins)", 20, left: true) + pad("to 7", 6, left: true) + pad("goals", 9, left: true)
                + pad("median s", 10, left: true) + pad("mean s", 8, left: true)
        ]
        var previous: String?
        for (group, row) in rows {
            lines.append(
                pad(group == previous ? "" : group, 9) + pad(row.rival, 15)
                    + pad("\(row.wins)-\(row.draws)-\(row.losses)", 10, left: true)
                    + pad(percent(row.winRate), 10, left: true)
                    + pad("\(percent(row.winWilson95Low))–\(percent(row.winWilson95High))", 20, left: true)
                    + pad("\(row.completed)", 6, left: true) + pad("\(row.goalsFor)-\(row.goalsAgainst)", 9, left: true)
                    + pad(row.medianSecondsToSeven.map { fixed($0, 0) } ?? "> \(matchSeconds)", 10, left: true)
                    + pad(fixed(row.meanSeconds, 0), 8, left: true))
            previous = group
        }
        return lines
    }

    func number(_ value: Double?, _ decimals: Int = 1) -> String {
        value.map { fixed($0, decimals) } ?? "–"
    }
}
