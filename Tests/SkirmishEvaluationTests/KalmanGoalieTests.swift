import SkirmishGames
import SkirmishOpponent
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishEvaluation

/// The ported Robot Air Hockey Challenge baseline: its tracker finds the puck's velocity from positions alone, and it
/// defends shots over the lock-step table.
@Suite(.ownThread) struct KalmanGoalieTests {
    /// The shooter: never moves.
    private struct Idle: PuckAgent {
        mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {}
        mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {}
        mutating func act(now: Instant) -> PaddleState? { nil }
    }

    @Test func itGoesWhereTheTrackedPuckCrossesTheDefenceLine() throws {
        var goalie = KalmanGoalie(seat: 0)
        var puck = TableSnapshot.Puck(x: 100, y: 60, vx: 3, vy: 9, angle: 0, spin: 0)
        var tick: UInt32 = 100
        // Snapshots every second tick, positions only used; the free path is the truth.
        for _ in 0..<8 {
            let snapshot = TableSnapshot(
                tick: tick, lastInputStep: 0, me: .init(x: 160, y: 425, vx: 0, vy: 0),
                them: .init(x: 160, y: 80, vx: 0, vy: 0), puck: puck, myScore: 0, theirScore: 0, phase: .playing,
                stateHash: 0)
            goalie.observe(snapshot, at: Instant(seconds: Double(tick) / 60))
            for _ in 0..<2 { _ = PuckMatch.advanceFreePuck(&puck) }
            tick &+= 2
        }
        let path = PuckPath(following: puck, defender: 0, line: KalmanGoalie.defenceLine, maxTicks: 120)
        let crossing = try #require(path.crossingX)
        // Acting at once on the newest snapshot (no round trip yet): the puck two ticks back is the filter's start.
        let acted = goalie.act(now: Instant(seconds: Double(tick - 2) / 60))
        let input = try #require(acted)
        #expect(input.y == KalmanGoalie.defenceLine)
        #expect(abs(input.x - crossing) < 12, "went to \(input.x), the puck crosses at \(crossing)")
    }

    @Test func itSavesMostCornerShotsWithoutLatency() {
        var table = LockstepTable(
            bottom: Idle(), top: KalmanGoalie(seat: 1), bottomLink: .init(), topLink: .init(), seed: 4)
        for _ in 0..<60 { table.step() }
        var random = SeededRandom(seed: 77)
        var saves = 0
        let shots = 45
        for index in 0..<shots {
            let shot = PuckShot.corner(banked: index % 2 == 1, using: &random)
            if table.shoot(shot, at: 1).outcome.isSave { saves += 1 }
            for _ in 0..<20 { table.step() }
        }
        // The still paddle saves none of these (the shot set keeps clear of it); the baseline, which moves, most.
        #expect(saves >= shots * 3 / 4, "saved \(saves)/\(shots)")
    }
}
