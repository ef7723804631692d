import SkirmishGames
import SkirmishWire
import Testing

@testable import SkirmishEvaluation

/// The attack's headroom: strikes played out against a copy of the rival and the table, in lock-step.
@Suite struct AttackHeadroomTests {
    /// Every candidate strike is a different drive, in 24 directions a unit apart on the circle.
    @Test func theCandidatesAreDistinctDrivesAllAround() {
        let puck = TableSnapshot.Puck(x: 160, y: 300, vx: 3, vy: 4, angle: 0, spin: 0)
        let drives = AttackHeadroom.drives(for: puck)
        #expect(drives.count == AttackHeadroom.candidates)
        let targets = Set(drives.map { "\($0.target.x),\($0.target.y),\($0.ticks)" })
        #expect(targets.count == drives.count)
        #expect(AttackHeadroom.unitCircle.count == 24)
        for (sine, cosine) in AttackHeadroom.unitCircle {
            #expect(abs(sine * sine + cosine * cosine - 1) < 1e-5)
        }
    }

    /// With no latency the swarm's defender reaches every strike: at each moment the AI began one, none of the
    /// hundreds of others scores either. Over 150 ms the same defender is beaten from some of those moments, and
    /// the measure says so.
    @Test func noStrikeBeatsTheDefenderAtOnceButSomeDoOverASlowLink() {
        let headroom = AttackHeadroom(seconds: 12, seed: 5)
        let quick = headroom.measure(rival: .defender, latencyMilliseconds: 0)
        #expect(quick.moments >= 5, "\(quick)")
        #expect(quick.open == 0 && quick.scoringStrikes == 0, "\(quick)")
        #expect(quick.strikes == quick.moments * AttackHeadroom.candidates)
        let slow = headroom.measure(rival: .defender, latencyMilliseconds: 150)
        #expect(slow.moments >= 3, "\(slow)")
        #expect(slow.open > 0 && slow.scoringStrikes > 0, "\(slow)")
    }
}
