import SkirmishWire
import Testing

@testable import SkirmishGames

@Suite struct PuckMatchTests {
    typealias K = PuckConstants

    /// A match past its kick-off, at tick 0, so a test starts from the very first tick of play.
    func playing() -> PuckMatch {
        var match = PuckMatch()
        match.start()
        match.phase = .playing
        match.puck.angle = 0
        return match
    }

    @Test func startsWaitingWithThePuckAtRestInTheCentre() {
        var match = PuckMatch()
        #expect(match.phase == .waiting)
        #expect(match.puck == TableSnapshot.Puck(x: 160, y: 240, vx: 0, vy: 0, angle: 0, spin: 0))
        let events = match.step(PuckTarget(x: 0, y: 0), nil)
        #expect(events.isEmpty)
        #expect(match.tick == 0)
        match.start()
        #expect(match.phase == .goalPause)
        #expect(match.puck.angle == Float(K.goalPauseTicks))
    }

    @Test func aMatchKicksOffAfterThreeSecondsInWhichThePuckCannotBeHit() {
        var match = PuckMatch()
        match.start()
        #expect(K.goalPauseTicks == 3 * K.tickRate)
        // Seat 0 charges the resting puck from below, again and again: nothing moves it during the kick-off.
        for tick in 1..<K.goalPauseTicks {
            let events = match.step(PuckTarget(x: 160, y: tick.isMultiple(of: 2) ? 280 : 440), nil)
            #expect(events.hits == 0)
            #expect(match.phase == .goalPause)
            #expect(
                match.puck
                    == TableSnapshot.Puck(x: 160, y: 240, vx: 0, vy: 0, angle: Float(K.goalPauseTicks - tick), spin: 0))
        }
        _ = match.step(PuckTarget(x: 160, y: 440), nil)
        #expect(match.phase == .playing && match.puck.angle == 0 && match.tick == UInt32(K.goalPauseTicks))
        // The paddle comes back up: the first tick of play can hit.
        for _ in 0..<8 where match.puck.vy == 0 {
            _ = match.step(PuckTarget(x: 160, y: 280), nil)
        }
        #expect(match.puck.vy < 0)
    }

    @Test func nonFiniteTargetsAreRefusedAndTheOldTargetKept() {
        var match = playing()
        _ = match.step(PuckTarget(x: 100, y: 400), PuckTarget(x: 200, y: 400))
        let events = match.step(PuckTarget(x: .nan, y: 300), PuckTarget(x: 10, y: .infinity))
        #expect(events.refused(seat: 0) && events.refused(seat: 1))
        #expect(match.paddle0.x == 100 && match.paddle0.y == 400)
        // Seat 1's target (200, 400) in its own frame is (120, 80) on the canonical table.
        #expect(match.paddle1.x == 120 && match.paddle1.y == 80)
    }

    @Test func paddlesMoveAtMostFortyPixelsATickAndStayInTheirHalf() {
        var match = playing()
        _ = match.step(PuckTarget(x: 160, y: -1_000), PuckTarget(x: 160, y: -1_000))
        #expect(match.paddle0.y == 400 - 40 + K.quantum)
        #expect(match.paddle0.vy == -40 + K.quantum)
        #expect(match.paddle1.y == 80 + 40 - K.quantum)
        for _ in 0..<20 {
            _ = match.step(nil, nil)
        }
        #expect(match.paddle0.y == 280)
        #expect(match.paddle1.y == 200)
        #expect(match.paddle0.vy == 0)
        _ = match.step(PuckTarget(x: 1e9, y: 1e9), PuckTarget(x: 1e9, y: 1e9))
        for _ in 0..<20 {
            _ = match.step(nil, nil)
        }
        #expect(match.paddle0.x == 280 && match.paddle0.y == 440)
        #expect(match.paddle1.x == 40 && match.paddle1.y == 40)
    }

    @Test func aHitSendsThePuckAlongTheNormalOncePerApproach() {
        var match = playing()
        match.paddle0 = TableSnapshot.Paddle(x: 160, y: 320, vx: 0, vy: 0)
        match.target0 = PuckTarget(x: 160, y: 320)
        // Move up 30 px: centre distance 80 → 50, a hit at 1.5 × 30 = 45, clamped to 15, straight up.
        let hit = match.step(PuckTarget(x: 160, y: 290), nil)
        #expect(match.puck.vx == 0 && match.puck.vy == -15)
        #expect(match.puck.y == 240)
        #expect(hit.hit(seat: 0) && !hit.hit(seat: 1) && !hit.isEmpty)
        // Still in contact while the paddle follows: no second hit, only friction.
        let follow = match.step(PuckTarget(x: 160, y: 280), nil)
        #expect(follow.hits == 0)
        #expect(match.puck.vy == -15 + K.friction)
        #expect(match.puck.y == PuckMatch.quantise(240 - 15 + K.friction))
    }

    @Test func aPuckRunningIntoAStillPaddleBouncesAtTheMinimumSpeedAlongTheRealNormal() throws {
        var match = playing()
        match.paddle1 = TableSnapshot.Paddle(x: 160, y: 170, vx: 0, vy: 0)
        match.target1 = PuckTarget(x: 160, y: 170)
        match.puck = TableSnapshot.Puck(x: 196, y: 220, vx: 0, vy: -4, angle: 0, spin: 0)
        let events = match.step(nil, nil)
        // A puck running into a still paddle is that paddle's hit.
        #expect(events.hits == 2)
        // The puck moved to (196, 216.1), 58.5 from the paddle: a hit at 2.5 along (36, 46.1) / 58.5.
        let y = PuckMatch.quantise(216.1)
        #expect(match.puck.y == y)
        let distance = (36 * 36 + (y - 170) * (y - 170)).squareRoot()
        #expect(match.puck.vx == 36 / distance * 2.5)
        #expect(match.puck.vy == (y - 170) / distance * 2.5)
        let speed = (match.puck.vx * match.puck.vx + match.puck.vy * match.puck.vy).squareRoot()
        #expect(abs(speed - 2.5) < 1e-5)
    }

    @Test func aPuckPinchedBetweenBothPaddlesGetsTheSumOfTheirHits() {
        var match = playing()
        match.puck = TableSnapshot.Puck(x: 160, y: 240, vx: 0, vy: 0, angle: 0, spin: 0)
        match.paddle0 = TableSnapshot.Paddle(x: 160, y: 310, vx: 0, vy: 0)
        match.paddle1 = TableSnapshot.Paddle(x: 100, y: 180, vx: 0, vy: 0)
        // Seat 0 moves up 20 (hit 15 straight up); seat 1 moves to (130, 200) — 50 px from the puck along (3, 4)/5,
        // moving 36 px: also 15. The sum (9, 12 − 15) = (9, −3) has speed 9.49, inside [2.5, 15].
        let events = match.step(PuckTarget(x: 160, y: 290), PuckTarget(x: 320 - 130, y: 480 - 200))
        #expect(events.hit(seat: 0) && events.hit(seat: 1))
        let a: (Float, Float) = (0, -15)
        let b: (Float, Float) = (30 / 50 * 15, 40 / 50 * 15)
        let sum = (a.0 + b.0, a.1 + b.1)
        let speed = (sum.0 * sum.0 + sum.1 * sum.1).squareRoot()
        #expect(match.puck.vx == sum.0 * (speed / speed))
        #expect(match.puck.vy == sum.1 * (speed / speed))
    }

    @Test func aGoalNeedsTheMouthThenPausesAndResumes() throws {
        var match = playing()
        match.puck = TableSnapshot.Puck(x: 160, y: 25, vx: 0, vy: -30, angle: 0, spin: 0)
        let events = match.step(nil, nil)
        let goal = try #require(events.goal)
        #expect(goal.scorer == 0 && goal.score0 == 1 && goal.score1 == 0 && goal.tick == 1)
        #expect(match.phase == .goalPause)
        #expect(match.puck.x == 160 && match.puck.y == 240 && match.puck.vx == 0 && match.puck.vy == 0)
        #expect(goal.message(for: 1) == GoalScored(tick: 1, scorer: .them, myScore: 0, theirScore: 1))
        for _ in 0..<(K.goalPauseTicks - 1) {
            _ = match.step(nil, nil)
        }
        #expect(match.phase == .goalPause)
        _ = match.step(nil, nil)
        #expect(match.phase == .playing)
        #expect(match.puck.angle == 0)

        match.puck = TableSnapshot.Puck(x: 60, y: 25, vx: 0, vy: -30, angle: 0, spin: 0)
        #expect(match.step(nil, nil).goal == nil)
        #expect(match.puck.y == 40 - PuckMatch.quantise(25 - 29.9) && match.puck.vy == 29.9)
        #expect(match.puck.spin == 0)
    }

    @Test func wallsReflectAndAddSpin() {
        var match = playing()
        match.puck = TableSnapshot.Puck(x: 25, y: 240, vx: -10, vy: 6, angle: 0, spin: 0)
        _ = match.step(nil, nil)
        #expect(match.puck.vx == 9.9)
        #expect(match.puck.x == 40 - PuckMatch.quantise(25 - 9.9))
        #expect(match.puck.spin == K.wallSpin * 5.9)
        #expect(match.puck.angle == match.puck.spin)
    }

    @Test func firstToSevenWinsAndTheMatchStops() {
        var match = playing()
        var last = PuckEvents()
        for _ in 0..<7 {
            while match.phase == .goalPause {
                _ = match.step(nil, nil)
            }
            match.puck = TableSnapshot.Puck(x: 160, y: 460, vx: 0, vy: 30, angle: 0, spin: 0)
            last = match.step(nil, nil)
        }
        #expect(last.winner == 1)
        #expect(match.phase == .over && match.score1 == 7 && match.winner == 1)
        #expect(match.matchOver(for: 0) == PuckMatchOver(winner: .them, myScore: 0, theirScore: 7))
        let frozen = match
        #expect(match.step(PuckTarget(x: 0, y: 0), nil).isEmpty)
        #expect(match.hashes == frozen.hashes)
    }

    @Test func forfeitEndsTheMatchForTheOtherSeat() {
        var match = playing()
        #expect(match.forfeit(loser: 0).winner == 1)
        #expect(match.phase == .over)
        #expect(match.forfeit(loser: 1).isEmpty)
    }

    @Test func quantisationIsExactAndMirrorsExactly() {
        var inputs = Inputs(seed: 3)
        for _ in 0..<10_000 {
            let v = inputs.unit() * 600 - 60
            let q = PuckMatch.quantise(v)
            #expect(abs(q - v) <= K.quantum / 2)
            #expect(K.width - (K.width - q) == q)
            #expect(K.height - (K.height - q) == q)
            #expect(PuckMatch.quantise(q) == q)
        }
    }
}
