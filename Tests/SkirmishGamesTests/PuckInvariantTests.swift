import SkirmishGames
import SkirmishTestSupport
import SkirmishWire
import Testing

/// A million ticks of random inputs, split across arguments so the parts can run in parallel.
@Suite(.ownThread) struct PuckInvariantTests {
    typealias K = PuckConstants

    struct Tally {
        var goals = 0
        var matches = 0
        var refused = 0
        var hits = 0
    }

    @Test(arguments: 0..<4 as Range<UInt64>)
    func aMillionRandomTicksKeepTheInvariants(part: UInt64) {
        var inputs = Inputs(seed: 0x5EED_0000 + part)
        var match = PuckMatch()
        match.start()
        var tally = Tally()
        var broken = 0
        for _ in 0..<250_000 {
            let before = match
            let events = match.step(inputs.target(seat: 0, match: match), inputs.target(seat: 1, match: match))
            tally.refused += (events.refused(seat: 0) ? 1 : 0) + (events.refused(seat: 1) ? 1 : 0)
            if let goal = events.goal {
                tally.goals += 1
                broken += Self.goalWasThroughTheMouth(before: before, scorer: goal.scorer) ? 0 : 1
            }
            if abs(match.puck.vx) > abs(before.puck.vx) + 0.01 && events.goal == nil { tally.hits += 1 }
            broken += Self.violations(match, before: before)
            if match.phase == .over {
                tally.matches += 1
                match = PuckMatch()
                match.start()
            }
            if broken > 0 { break }
        }
        #expect(broken == 0)
        #expect(tally.goals > 50)
        #expect(tally.matches > 5)
        #expect(tally.refused > 1_000)
        #expect(tally.hits > 1_000)
    }

    /// Counts broken invariants after one step.
    static func violations(_ m: PuckMatch, before: PuckMatch) -> Int {
        var count = 0
        let p = m.puck
        let r = K.puckRadius
        let values = [p.x, p.y, p.vx, p.vy, p.angle, p.spin]
        if !values.allSatisfy(\.isFinite) { count += 1 }
        if !(r...(K.width - r)).contains(p.x) { count += 1 }
        let onTable = (r...(K.height - r)).contains(p.y)
        if !onTable && !K.goalMouth.contains(p.x) { count += 1 }
        if !((-r)...(K.height + r)).contains(p.y) { count += 1 }
        if abs(p.vx) > K.maxSpeed || abs(p.vy) > K.maxSpeed || abs(p.spin) > K.maxSpin { count += 1 }
        if m.phase != .goalPause && abs(p.angle) > Float.pi { count += 1 }
        if !isQuantised(p.x) || !isQuantised(p.y) { count += 1 }
        for seat in 0..<2 {
            let paddle = m.paddle(of: seat)
            let box = K.paddleBox(seat: seat)
            if !box.x.contains(paddle.x) || !box.y.contains(paddle.y) { count += 1 }
            if (paddle.vx * paddle.vx + paddle.vy * paddle.vy).squareRoot() > K.maxPaddleStep { count += 1 }
            let old = before.paddle(of: seat)
            if paddle.x - old.x != paddle.vx || paddle.y - old.y != paddle.vy { count += 1 }
            if !isQuantised(paddle.x) || !isQuantised(paddle.y) { count += 1 }
        }
        if m.score0 > K.winningScore || m.score1 > K.winningScore { count += 1 }
        if (m.phase == .over) != (m.score0 == K.winningScore || m.score1 == K.winningScore) { count += 1 }
        if m.tick != before.tick &+ 1 { count += 1 }
        return count
    }

    static func isQuantised(_ v: Float) -> Bool {
        let scaled = v * 4096
        return scaled == scaled.rounded()
    }

    /// A goal only after the puck was at the right end, inside the mouth, heading out.
    static func goalWasThroughTheMouth(before: PuckMatch, scorer: Int) -> Bool {
        let p = before.puck
        let reach = K.maxSpeed + K.puckRadius
        let nearEnd = scorer == 0 ? p.y < reach : p.y > K.height - reach
        return nearEnd && (K.goalMouth.lowerBound - K.maxSpeed...K.goalMouth.upperBound + K.maxSpeed).contains(p.x)
    }
}
