import SkirmishGames
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishOpponent

/// How the AI rates its shots: the closed-form path against the physics, and the two styles against the players they
/// are meant for.
@Suite(.ownThread) struct AttackTests {
    /// The tick of the last side-wall bounce before the puck reaches a line, by the closed form the `late` style
    /// uses, against the physics stepping the same puck: straight, off one wall, off both.
    @Test(arguments: [
        (Float(160), Float(300), Float(0), Float(-15)), (250, 280, 10, -11), (70, 300, -9, -12), (200, 400, 12, -10),
        (120, 260, -6, -13.5), (26, 300, -1, -12),
    ])
    func theLastTurnIsThePhysicsLastBounce(x: Float, y: Float, vx: Float, vy: Float) throws {
        let start = Point(x: x, y: y)
        let velocity = Point(x: vx, y: vy)
        let line: Float = 60
        let reach = try #require(Opponent.flight(from: start, velocity: velocity, to: line))
        var puck = TableSnapshot.Puck(x: x, y: y, vx: vx, vy: vy, angle: 0, spin: 0)
        var lastBounce = 0
        var tick = 0
        while puck.y > line, tick < 200 {
            let before = puck.vx
            _ = PuckMatch.advanceFreePuck(&puck)
            tick += 1
            if (before < 0) != (puck.vx < 0) { lastBounce = tick }
        }
        let predicted = Opponent.lastTurn(from: start, velocity: velocity, within: reach.ticks)
        #expect(abs(predicted - Float(lastBounce)) <= 1, "bounce at \(lastBounce), closed form \(predicted)")
    }

    /// The best-rated direction in `style` from `puck` against a paddle at `them` that lags `lag` ticks.
    static func best(
        _ style: AttackStyle, from puck: Point, them: Point, lag: Float
    ) -> (direction: Point, score: Float)? {
        Opponent.bestShot(from: puck, speed: 15, them: them, style: style, lag: lag).map {
            (Point(x: Opponent.sine($0.angle), y: -Opponent.cosine($0.angle)), $0.score)
        }
    }

    /// A goalkeeper in the middle of its goal that sees the table 10 ticks late (50 ms each way) has time to reach
    /// any shot that goes straight, but not one that turns off a side wall late: the best `late` shot from near the
    /// centre line is a bank shot it is too late for. The same keeper seeing the table 3 ticks late can reach every
    /// shot.
    @Test func aBankShotThatTurnsLateBeatsALaggingKeeper() throws {
        let puck = Point(x: 120, y: 250)
        let keeper = Point(x: 160, y: 55)
        func lateness(_ direction: Point, lag: Float) throws -> Float {
            let goal = try #require(Opponent.flight(from: puck, velocity: direction * 15, to: 0))
            // A path into where the keeper stands (`nil`) is as reachable as any.
            return Opponent.lateness(from: puck, velocity: direction * 15, them: keeper, lag: lag, goal: goal) ?? -100
        }
        let slow = try #require(Self.best(.late, from: puck, them: keeper, lag: 10))
        #expect(try lateness(slow.direction, lag: 10) > 0)
        let turn = Opponent.lastTurn(from: puck, velocity: slow.direction * 15, within: 40)
        #expect(turn > 0, "the best shot against a lagging keeper goes straight")
        let quick = try #require(Self.best(.late, from: puck, them: keeper, lag: 3))
        #expect(try lateness(quick.direction, lag: 3) <= 0)
    }

    /// A path through the spot where the other paddle already stands is never open, whatever the lag: a paddle that
    /// does not move stops it. Against a keeper that sees at once (nothing is open) a shot into it rates below one
    /// past it.
    @Test func aPathThroughAStandingPaddleIsNeverOpen() throws {
        let keeper = Point(x: 100, y: 55)
        let puck = Point(x: 100, y: 300)
        let straight = Point(x: 0, y: -15)
        let goal = try #require(Opponent.flight(from: puck, velocity: straight, to: 0))
        #expect(Opponent.lateness(from: puck, velocity: straight, them: keeper, lag: 100, goal: goal) == nil)
        let into = try #require(
            Opponent.shotScore(from: puck, velocity: straight, them: keeper, style: .late, lag: 100))
        #expect(into < 500, "a shot into a standing keeper is rated open: \(into)")
        let slow = try #require(Opponent.shotScore(from: puck, velocity: straight, them: keeper, style: .late, lag: 0))
        let past = try #require(
            Opponent.shotScore(from: puck, velocity: Point(x: 5, y: -14), them: keeper, style: .late, lag: 0))
        #expect(past > slow, "past the keeper: \(past), into it: \(slow)")
    }

    /// A path through the spot where the other paddle already stands is never the `late` pick, however late it
    /// turns: a paddle that does not move stops it.
    @Test func aShotIntoAStandingPaddleIsRatedBelowTheRest() throws {
        let puck = Point(x: 160, y: 300)
        let keeper = Point(x: 220, y: 50)
        let best = try #require(Self.best(.late, from: puck, them: keeper, lag: 3))
        let passing = try #require(Opponent.flight(from: puck, velocity: best.direction * 15, to: 50))
        #expect(abs(passing.x - keeper.x) > PuckConstants.contactDistance, "passes the keeper at x = \(passing.x)")
    }

    /// The `wide` style sends the puck past the far side of the other paddle: a player standing at the left post is
    /// beaten to the right of the goal.
    @Test func aWideShotPassesTheFarSideOfThePaddle() throws {
        let puck = Point(x: 160, y: 300)
        let best = try #require(Self.best(.wide, from: puck, them: Point(x: 90, y: 90), lag: 3))
        let goal = try #require(Opponent.flight(from: puck, velocity: best.direction * 15, to: 0))
        #expect(goal.x > 160, "enters the goal at x = \(goal.x)")
    }

    /// A shot that misses the mouth is not rated in either style.
    @Test(arguments: AttackStyle.allCases)
    func aShotThatMissesIsNotRated(style: AttackStyle) {
        let wide = Opponent.shotScore(
            from: Point(x: 160, y: 300), velocity: Point(x: 14, y: -5), them: Point(x: 160, y: 55), style: style,
            lag: 3)
        #expect(wide == nil)
    }
}

/// The read of the other player: does it come out for the puck or keep its goal?
@Suite(.ownThread) struct RivalReadTests {
    static func snapshot(puckY: Float, themY: Float, phase: PuckPhase = .playing) -> TableSnapshot {
        TableSnapshot(
            tick: 1, lastInputStep: 0, me: .init(x: 160, y: 400, vx: 0, vy: 0),
            them: .init(x: 160, y: themY, vx: 0, vy: 0),
            puck: .init(x: 160, y: puckY, vx: 0, vy: -3, angle: 0, spin: 0), myScore: 0, theirScore: 0, phase: phase,
            stateHash: 0)
    }

    /// A player who meets the puck 150 px out is read as coming out, after a second and a half of sightings or so
    /// and not after one second: then the AI shoots wide.
    @Test func aPlayerWhoComesOutIsBeatenWide() {
        var read = RivalRead()
        #expect(read.style == .late)
        for _ in 0..<30 { read.observe(Self.snapshot(puckY: 180, themY: 150)) }
        #expect(read.style == .late, "read after one second: \(read.depth) px")
        for _ in 0..<60 { read.observe(Self.snapshot(puckY: 180, themY: 150)) }
        #expect(read.style == .wide, "read after three seconds: \(read.depth) px")
    }

    /// A goalkeeper who steps out once to strike is still a goalkeeper.
    @Test func aGoalkeeperWhoStepsOutOnceIsStillOne() {
        var read = RivalRead()
        for _ in 0..<200 { read.observe(Self.snapshot(puckY: 180, themY: 60)) }
        for _ in 0..<15 { read.observe(Self.snapshot(puckY: 200, themY: 200)) }
        #expect(read.style == .late, "read \(read.depth) px")
    }

    /// Only a puck in the other half short of its goal area counts, and only in play: where a player stands with
    /// the puck in the AI's half, at its own goal, or during a goal pause says nothing about how it defends.
    @Test(arguments: [(Float(300), PuckPhase.playing), (100, .playing), (180, .goalPause)])
    func onlyAPuckInTheBandInPlayCounts(puckY: Float, phase: PuckPhase) {
        var read = RivalRead()
        for _ in 0..<300 { read.observe(Self.snapshot(puckY: puckY, themY: 200, phase: phase)) }
        #expect(read.depth == RivalRead.keeper)
    }
}

/// Matches in lock-step (the server's own rules, simulated links, no sockets): the AI beats its own no-prediction
/// self by the late turns its prediction lets it aim.
@Suite struct PredictionWinsTests {
    /// Across 150 ms each way the expert beats its no-prediction self to 7 within 3 minutes, every time.
    @Test func theExpertBeatsItsNoPredictionSelfToSeven() {
        let blind = OpponentConfiguration(difficulty: .expert).withoutPrediction
        let run = MatchRun.run(
            OpponentConfiguration(difficulty: .expert),
            against: { Opponent(seat: 1, configuration: blind, seed: UInt64($0) + 7) },
            link: .init(latency: 0.15, jitter: 0.03, loss: 0.02), matches: 3, ticks: 60 * 180, seed: 41)
        #expect(run.wins == 3 && run.goalsFor == 21, "won \(run.wins) of 3, goals \(run.goalsFor)-\(run.goalsAgainst)")
    }
}
