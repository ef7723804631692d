import Foundation
import SkirmishOpponent
import SkirmishServer
import SkirmishWire
import Testing

/// The difficulty bands over the real protocol: the human-like player model (SkirmishOpponent's ``HumanPlayer``)
/// plays the practice page in headless Chromium — it reads the page's own snapshots and moves the mouse — against
/// the preset tuned for its level, and the goals each side scores must agree with the band `skirmish ai-eval` holds
/// the preset to over 40 matches.
///
/// Ninety seconds per pairing is a small sample, so the judgement is the one it allows: the Wilson 95 % interval of
/// the AI's share of the goals must reach the band — the close pairings' goals together (one pairing's few goals
/// cannot miss 0.3–0.7 on their own), and the expert's on their own. A
/// preset tuned for a level gives it a close match (a share of 0.3–0.7 of the goals), and so does the adaptive AI; the
/// expert beats a beginner
/// (at least 0.9 of them). A model that stopped moving, a page that stopped sending input, or a preset far off its
/// band fails it.
@Suite(.serialized) struct PracticeBandsTests {
    struct Pairing: Sendable, CustomStringConvertible {
        var skill: HumanPlayer.Skill
        var difficulty: Opponent.Level
        /// The AI's share of the goals its band stands for.
        var share: ClosedRange<Double>

        var description: String { "\(difficulty) against a \(skill.rawValue) player" }
    }

    static let pairings = [
        Pairing(skill: .beginner, difficulty: .easy, share: 0.3...0.7),
        Pairing(skill: .casual, difficulty: .medium, share: 0.3...0.7),
        Pairing(skill: .skilled, difficulty: .hard, share: 0.3...0.7),
        Pairing(skill: .casual, difficulty: .adaptive, share: 0.3...0.7),
        Pairing(skill: .beginner, difficulty: .expert, share: 0.9...1),
    ]

    /// Goals that end a pairing's play (the match ends at 7 to either side first).
    static let goals = 8
    /// The most play a pairing gets, kick-offs included.
    static let playTime = Duration.seconds(90)

    @Test func aHumanLikePlayerAtEachLevelGetsTheMatchItsBandPromises() async throws {
        try await PracticePageTests.withPage(difficulty: .easy) { practice, chromium in
            // One tab per pairing, each at its own table, all playing at once.
            var tables: [(pairing: Pairing, tab: Tab, match: UInt32)] = []
            for pairing in Self.pairings {
                let tab = try await chromium.openTab()
                // Every tab plays as if it were the one in front: a background tab's timers and frames are throttled.
                try await tab.send("Emulation.setFocusEmulationEnabled", ["enabled": true])
                try await tab.send("Page.setWebLifecycleState", ["state": "active"])
                try await tab.navigate(to: practice.pageURL)
                var match = try #require(await tab.waitUntilPlaying(), "\(pairing): the page never joined")
                if pairing.difficulty != .easy {
                    _ = try await tab.evaluate(
                        """
                        (() => { const s = document.getElementById('difficulty'); s.value = '\(pairing.difficulty)';
                          s.dispatchEvent(new Event('change')); return s.value; })()
                        """)
                    match = try #require(await tab.waitUntilPlaying(notMatch: match), "\(pairing): no new match")
                }
                #expect(await practice.opponent(at: match)?.difficulty == pairing.difficulty)
                tables.append((pairing, tab, match))
            }
            let played = try await withThrowingTaskGroup(of: (Int, Played).self) { group in
                for (index, table) in tables.enumerated() {
                    group.addTask { (index, try await Self.play(table.pairing, on: table.tab, seed: UInt64(index))) }
                }
                var played = [Played](repeating: Played(), count: tables.count)
                for try await (index, one) in group { played[index] = one }
                return played
            }
            // A person moves the mouse continuously; a machine so busy that the browser answers a few times a second
            // cannot stand in for one, and its scores would say nothing about the bands.
            // The pace is over the time each tab played: a match that ends early (the goals in, or over before its
            // tab began, while the other tabs were still being set up on a busy machine) is not a slow mouse.
            let paces = zip(tables, played).map { table, one in
                (table.pairing, one.moves, one.seconds, Double(one.moves) / max(one.seconds, 1))
            }
            if let slowest = paces.min(by: { $0.3 < $1.3 }), slowest.3 < Self.leastPace {
                let each = paces.map { "\($0.0): \($0.1) moves in \(String(format: "%.0f", $0.2)) s" }
                try Test.cancel(
                    Comment(
                        rawValue: "the machine is too busy for a person-paced player: "
                            + "\(String(format: "%.1f", slowest.3)) mouse moves a second at the slowest "
                            + "(\(each.joined(separator: "; ")))"))
            }
            let scores = played.map(\.score)
            for ((pairing, _, match), one) in zip(tables, played) {
                let score = one.score
                // A close pairing's eight goals at most cannot miss 0.3–0.7 at 95 % on their own (0 of 8 reaches
                // 0.32): those are judged together below. The expert's are judged here, on enough goals to fail.
                if pairing.difficulty == .expert {
                    try #require(
                        score.ai + score.person >= 3, "\(pairing): \(score.ai)–\(score.person) is too few goals")
                    Self.judge(pairing.description, ai: score.ai, person: score.person, band: pairing.share)
                }
                // The server's count is the page's: the AI's last snapshot, while it still sits at the table, shows at
                // least the same score.
                if let seen = try await practice.opponent(at: match)?.lastSnapshot() {
                    #expect(Int(seen.myScore) >= one.final.ai && Int(seen.theirScore) >= one.final.person, "\(pairing)")
                }
            }
            // A close match at 50 ms can be a long rally with a goal or two a minute: the four pairings meant to be
            // close are judged together as well, on enough goals for the interval to mean something.
            let close = zip(tables, scores).filter { $0.0.pairing.difficulty != .expert }.map(\.1)
            let ai = close.reduce(0) { $0 + $1.ai }
            let person = close.reduce(0) { $0 + $1.person }
            try #require(ai + person >= 10, "\(ai)–\(person) over the close pairings is too few goals to judge")
            Self.judge("the close pairings together", ai: ai, person: person, band: 0.3...0.7)
            // Nothing the pages sent was refused, but the inputs a page sent after it left a table for another
            // opponent: the server drops those as late (`stale`) or as for a match that is gone (`outOfState`).
            let stats = try await practice.server.stats()
            let refused = zip(Rejection.allCases, stats.rejected).filter {
                $0.1 > 0 && $0.0 != .stale && $0.0 != .outOfState
            }
            #expect(refused.isEmpty, "\(refused)")
        }
    }

    /// Plays the page as the model of a `pairing.skill` player until the goals are in, the match is over or the
    /// time is up; returns the page's score.
    /// What a pairing's play came to: the goals from its start, the score on the page at its end, the mouse moves.
    struct Played: Sendable {
        var score = (ai: 0, person: 0)
        var final = (ai: 0, person: 0)
        var moves = 0
        /// How long the tab played, seconds.
        var seconds = 0.0
    }

    /// The fewest mouse moves a second for the play to stand for a person (the loop aims at about 50).
    static let leastPace = 10.0

    static func play(_ pairing: Pairing, on tab: Tab, seed: UInt64) async throws -> Played {
        // The table's layout is fixed for the page's size: a table point maps to the page linearly.
        let origin = try await tab.clientPoint(0, 0)
        let unit = try await tab.clientPoint(100, 100)
        let scale = (x: (unit.x - origin.x) / 100, y: (unit.y - origin.y) / 100)
        var person = HumanPlayer(skill: pairing.skill, seed: 7 + seed)
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + playTime
        var lastTick: UInt32?
        var score = (ai: 0, person: 0)
        // Goals scored while the other tabs were being set up, against a mouse that did not move, are not counted.
        var before: (ai: Int, person: Int)?
        var final = (ai: 0, person: 0)
        var moves = 0
        while clock.now < deadline, score.ai + score.person < goals {
            let now = Instant(seconds: (clock.now - start).seconds)
            let page =
                try await tab.evaluate(
                    """
                    (() => { const g = window.practice.game, s = g.snapshots[g.snapshots.length - 1];
                      return s ? JSON.stringify({ status: g.status, s }) : null; })()
                    """) as? String
            if let page, let view = try? JSONDecoder().decode(PageView.self, from: Data(page.utf8)) {
                if view.s.tick != lastTick {
                    lastTick = view.s.tick
                    person.observe(view.s.snapshot, at: now)
                }
                let onPage = (ai: Int(view.s.theirScore), person: Int(view.s.myScore))
                final = onPage
                if before == nil { before = onPage }
                score = (onPage.ai - (before?.ai ?? 0), onPage.person - (before?.person ?? 0))
                if view.status == "over" || view.s.phase == PuckPhase.over.rawValue { break }
            }
            if let input = person.act(now: now) {
                let x = origin.x + Double(input.x) * scale.x
                let y = origin.y + Double(input.y) * scale.y
                try await tab.send("Input.dispatchMouseEvent", ["type": "mouseMoved", "x": x, "y": y])
                moves += 1
            }
            // About a frame between looks: the model acts on time, not on how often it is asked.
            try await Task.sleep(for: .milliseconds(20))
        }
        return Played(score: score, final: final, moves: moves, seconds: (clock.now - start).seconds)
    }

    /// Records an issue unless the Wilson 95 % interval of the AI's share of the goals reaches `band`.
    static func judge(_ what: String, ai: Int, person: Int, band: ClosedRange<Double>) {
        let total = ai + person
        let interval = wilson(successes: ai, trials: total)
        #expect(
            interval.upperBound >= band.lowerBound && interval.lowerBound <= band.upperBound,
            "\(what): the AI scored \(ai) of \(total) goals, a share within \(interval) at 95 %, outside \(band)")
    }

    /// The Wilson score interval at 95 % of a share of `successes` in `trials`.
    static func wilson(successes: Int, trials: Int) -> ClosedRange<Double> {
        let n = Double(trials)
        let p = Double(successes) / n
        let z = 1.96
        let centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        let half = z * ((p * (1 - p) / n + z * z / (4 * n * n)).squareRoot()) / (1 + z * z / n)
        return max(0, centre - half)...min(1, centre + half)
    }

    /// The page's newest snapshot, as `play.html` decodes it (its own frame: `me` is the person's paddle).
    struct PageView: Decodable {
        struct Snapshot: Decodable {
            struct Body: Decodable {
                var x: Float
                var y: Float
                var vx: Float
                var vy: Float
            }
            struct Puck: Decodable {
                var x: Float
                var y: Float
                var vx: Float
                var vy: Float
                var angle: Float
            }
            var tick: UInt32
            var lastInput: UInt32
            var me: Body
            var them: Body
            var puck: Puck
            var myScore: UInt8
            var theirScore: UInt8
            var phase: UInt8

            var snapshot: TableSnapshot {
                TableSnapshot(
                    tick: tick, lastInputStep: lastInput, me: .init(x: me.x, y: me.y, vx: me.vx, vy: me.vy),
                    them: .init(x: them.x, y: them.y, vx: them.vx, vy: them.vy),
                    puck: .init(x: puck.x, y: puck.y, vx: puck.vx, vy: puck.vy, angle: puck.angle, spin: 0),
                    myScore: myScore, theirScore: theirScore, phase: PuckPhase(rawValue: phase) ?? .waiting,
                    stateHash: 0)
            }
        }
        var status: String
        var s: Snapshot
    }
}
