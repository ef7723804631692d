import SkirmishGames
import SkirmishWire
import Testing

/// Neither seat is favoured: stepping the half-turned table with the seats' inputs swapped gives the half-turned
/// result. (Not bit for bit: `x + vx` is rounded before it is quantised, so the two frames may differ by a quantum.)
@Suite struct PuckFairnessTests {
    @Test func theHalfTurnedTableStepsToTheHalfTurnedResult() {
        var inputs = Inputs(seed: 17)
        var match = PuckMatch()
        match.start()
        var compared = 0
        var far = 0
        var eventMismatch = 0
        var worst: Float = 0
        for _ in 0..<50_000 {
            let t0 = inputs.finiteTarget()
            let t1 = inputs.finiteTarget()
            // Seat 1's view read as a canonical table is the half-turned table with the seats swapped.
            var turned = PuckMatch(snapshot: match.snapshot(for: 1, lastInputStep: 0), seat: 0)
            var original = match
            let a = original.step(t0, t1)
            let b = turned.step(t1, t0)
            if a.goal?.scorer != b.goal.map({ 1 - $0.scorer }) { eventMismatch += 1 }
            let expected = original.snapshot(for: 1, lastInputStep: 0)
            let actual = turned.snapshot(for: 0, lastInputStep: 0)
            let pairs: [(Float, Float)] = [
                (expected.puck.x, actual.puck.x), (expected.puck.y, actual.puck.y),
                (expected.puck.vx, actual.puck.vx), (expected.puck.vy, actual.puck.vy),
                (expected.puck.spin, actual.puck.spin), (expected.me.x, actual.me.x), (expected.me.y, actual.me.y),
                (expected.them.x, actual.them.x), (expected.them.y, actual.them.y),
            ]
            let error = pairs.map { abs($0.0 - $0.1) }.max() ?? 0
            worst = max(worst, error)
            far += error > 2 * PuckConstants.quantum ? 1 : 0
            compared += 1
            // Continue from the real game with chasing inputs so hits and goals happen.
            _ = match.step(inputs.target(seat: 0, match: match), inputs.target(seat: 1, match: match))
            if match.phase == .over {
                match = PuckMatch()
                match.start()
            }
        }
        #expect(compared == 50_000)
        #expect(eventMismatch == 0)
        #expect(far == 0, "worst difference \(worst)")
    }
}
