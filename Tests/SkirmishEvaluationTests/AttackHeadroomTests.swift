import SkirmishGames
import SkirmishOpponent
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishEvaluation

/// The attack's headroom: strikes played out against a copy of the rival and the table, in lock-step.
@Suite(.ownThread) struct AttackHeadroomTests {
    /// Every candidate strike is a different drive, in 24 directions a unit apart on the circle.
    @Test func theCandidatesAreDistinctDrivesAllAround() {
        let puck = TableSnapshot.Puck(x: 160, y: 300, vx: 3, vy: 4, angle: 0, spin: 0)
        let drives = AttackHeadroom.drives(for: puck, after: 3)
        #expect(drives.count == AttackHeadroom.candidates)
        let targets = Set(drives.map { "\($0.target.x),\($0.target.y),\($0.ticks)" })
        #expect(targets.count == drives.count)
        #expect(AttackHeadroom.unitCircle.count == 24)
        for (sine, cosine) in AttackHeadroom.unitCircle {
            #expect(abs(sine * sine + cosine * cosine - 1) < 1e-5)
        }
    }

    /// A candidate strike really drives the AI's paddle: its inputs continue the AI's steps, so the server takes
    /// them, and the paddle reaches the target across the link; then it goes home.
    @Test func aCandidateStrikeMovesThePaddleToItsTarget() {
        let link = LockstepTable<AttackHeadroom.Striker, AttackHeadroom.Rival>.Link(latency: 0.05, jitter: 0.001)
        var table = LockstepTable(
            bottom: AttackHeadroom.Striker.ai(Opponent(seat: 0, seed: 2)),
            top: AttackHeadroom.Rival(.defender, configuration: OpponentConfiguration(), seed: 2), bottomLink: link,
            topLink: link, seed: 2)
        for _ in 0..<30 { table.step() }
        guard case .ai(let opponent) = table.bottom else {
            Issue.record("the AI is not in the bottom seat")
            return
        }
        let target = PuckTarget(x: 60, y: 300)
        table.bottom = .drive(AttackHeadroom.Drive(step: opponent.lastInputStep, target: target, ticks: 20))
        for _ in 0..<18 { table.step() }
        let paddle = table.match.paddle(of: 0)
        #expect(abs(paddle.x - target.x) < 1 && abs(paddle.y - target.y) < 1, "paddle at \(paddle)")
        for _ in 0..<30 { table.step() }
        let home = table.match.paddle(of: 0)
        #expect(abs(home.x - PuckShot.keeperSpot.x) < 1 && abs(home.y - PuckShot.keeperSpot.y) < 1, "\(home)")
    }

    /// With no latency the swarm's defender reaches every strike: at each moment the AI began one, none of the
    /// hundreds of others scores either. Over 150 ms the same defender is beaten from some of those moments, some
    /// strikes past its paddle untouched, and the measure says so.
    @Test func noStrikeBeatsTheDefenderAtOnceButSomeDoOverASlowLink() {
        let headroom = AttackHeadroom(seconds: 8, seed: 5)
        let quick = headroom.measure(rival: .defender, latencyMilliseconds: 0)
        #expect(quick.moments >= 4, "\(quick)")
        #expect(quick.open == 0 && quick.scoringStrikes == 0, "\(quick)")
        #expect(quick.strikes == quick.moments * AttackHeadroom.candidates)
        let slow = headroom.measure(rival: .defender, latencyMilliseconds: 150)
        #expect(slow.moments >= 2, "\(slow)")
        #expect(slow.open > 0 && slow.scoringStrikes > 0, "\(slow)")
        // Over 150 ms the defender is beaten cleanly, past its paddle (a count of every goal as touched fails here).
        #expect(slow.cleanOpen > 0 && slow.cleanStrikes > 0, "\(slow)")
    }

    /// Against the AI's own no-prediction self over 50 ms, goals come mostly off the keeper's paddle: strikes that
    /// score only because the copy plays its exact fumble. The measure tells those from clean ones (a count of every
    /// goal as clean fails here).
    @Test func goalsOffTheRivalsPaddleAreNotCountedClean() {
        var seconds = 0
        let row = AttackHeadroom(seconds: 8, seed: 5).measure(
            rival: .noPrediction, latencyMilliseconds: 50, eachSecond: { seconds += 1 })
        #expect(seconds == 8)
        #expect(row.moments >= 4, "\(row)")
        #expect(row.scoringStrikes > row.cleanStrikes, "\(row)")
        #expect(row.open > row.cleanOpen, "\(row)")
    }
}
