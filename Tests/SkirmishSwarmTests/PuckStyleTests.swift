import SkirmishGames
import SkirmishOpponent
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishSwarm

/// The scripted Puck styles against each other in lock-step matches (pure, seeded simulation over a 20 ms link): every
/// pairing a swarm can make must finish its matches, or a persona plays one match for a whole soak and its match
/// figures stay at zero.
@Suite(.ownThread) struct PuckStyleTests {
    /// Plays six seeded matches of `bottom` against `top` for at most ten minutes each; returns each one's length in
    /// seconds (600 when it did not finish) and the final scores.
    static func matchLengths(_ bottom: PuckStyle, _ top: PuckStyle) -> [(seconds: Double, score: (UInt8, UInt8))] {
        (0..<6).map { index in
            let seed = 900 + UInt64(index)
            var table = LockstepTable(
                bottom: ScriptedPuckAgent(style: bottom, seat: 0, seed: seed),
                top: ScriptedPuckAgent(style: top, seat: 1, seed: seed &+ 77),
                bottomLink: .init(latency: 0.02, jitter: 0.005), topLink: .init(latency: 0.02, jitter: 0.005),
                seed: seed)
            table.play(limit: 60 * 600)
            return (Double(table.ticks) / 60, table.match.scores)
        }
    }

    @Test func chasersFinishWithinTwoMinutes() {
        let matches = Self.matchLengths(.chaser, .chaser)
        #expect(matches.allSatisfy { $0.seconds < 120 }, "\(matches)")
    }

    @Test func aChaserBeatsOrLosesToADefenderWithinSixMinutes() {
        let matches = Self.matchLengths(.chaser, .defender)
        #expect(matches.allSatisfy { $0.seconds < 360 }, "\(matches)")
        // Neither is a wall: the chaser wins, and the defender scores in at least half the matches (with the
        // three-second kick-off, all six seeded matches go to the chaser).
        #expect(matches.contains { $0.score.0 == 7 }, "\(matches)")
        #expect(matches.filter { $0.score.1 > 0 }.count >= 3, "\(matches)")
    }

    @Test func twoDefendersMostlyFinishWithinTenMinutes() {
        let matches = Self.matchLengths(.defender, .defender)
        let finished = matches.filter { $0.seconds < 600 }
        #expect(finished.count >= 4, "\(matches)")
        // Goals are scored even in the matches that run out of time: the goalies are beatable.
        #expect(matches.allSatisfy { Int($0.score.0) + Int($0.score.1) >= 3 }, "\(matches)")
    }

    /// The defender's goalie moves sideways at a human pace: at most its stride per input, never a jump to the puck.
    @Test func theDefenderMovesAcrossTheMouthAtAHumanPace() {
        let farPost = TableSnapshot.Puck(x: 40, y: 200, vx: 0, vy: 5, angle: 0, spin: 0)
        let first = PuckStyle.defender.aim(
            puck: farPost, inputStep: 1, phase: 0, previous: PuckTarget(x: 200, y: 430))
        #expect(first.x == 200 - PuckStyle.defenderStride)
        #expect(first.y == 430)
        var target = first
        for step in 2..<60 {
            target = PuckStyle.defender.aim(puck: farPost, inputStep: UInt32(step), phase: 0, previous: target)
        }
        #expect(target.x == 100)
    }
}
