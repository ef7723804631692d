import SkirmishGames
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishOpponent

/// The human-like player model: a reaction delay it never beats, a hand within its speed and acceleration, the
/// same play for the same seed, and skill that shows in matches.
@Suite(.ownThread) struct HumanPlayerTests {
    static func snapshot(tick: UInt32, puck: (x: Float, y: Float, vx: Float, vy: Float)) -> TableSnapshot {
        TableSnapshot(
            tick: tick, lastInputStep: 0, me: .init(x: 160, y: 430, vx: 0, vy: 0),
            them: .init(x: 160, y: 50, vx: 0, vy: 0),
            puck: .init(x: puck.x, y: puck.y, vx: puck.vx, vy: puck.vy, angle: 0, spin: 0), myScore: 0,
            theirScore: 0, phase: .playing, stateHash: 0)
    }

    @Test(
        "each player's reaction delay is drawn once from its level's range, the same for the same seed",
        arguments: HumanPlayer.Skill.allCases)
    func reactionDelaysAreSeededWithinTheLevel(skill: HumanPlayer.Skill) {
        let range = HumanPlayer.parameters(skill).reaction
        let delays = (0..<200).map { HumanPlayer(skill: skill, seed: UInt64($0)).reaction }
        #expect(delays.allSatisfy { range.contains($0) })
        #expect(range.lowerBound >= 0.15 && range.upperBound <= 0.25, "people react in 150–250 ms")
        #expect(Set(delays).count > 150, "drawn per player")
        #expect(HumanPlayer(skill: skill, seed: 7).reaction == HumanPlayer(skill: skill, seed: 7).reaction)
    }

    @Test("a player acts on nothing it could not have seen a reaction delay ago", arguments: HumanPlayer.Skill.allCases)
    func nothingIsSeenBeforeTheReactionDelay(skill: HumanPlayer.Skill) {
        var player = HumanPlayer(skill: skill, seed: 3)
        // A resting puck at the left of the player's half; then, at 1 s, it is at the right.
        for tick in 0..<60 {
            player.observe(
                Self.snapshot(tick: UInt32(tick), puck: (60, 300, 0, 0)), at: Instant(seconds: Double(tick) / 60))
        }
        var t = 1.0
        player.observe(Self.snapshot(tick: 60, puck: (260, 300, 0, 0)), at: Instant(seconds: t))
        var lastX = Float(0)
        // Until the delay has passed, the hand heads for the left; by the delay plus a moment it turns right.
        while t < 1 + player.reaction - 1.0 / 60 {
            lastX = player.act(now: Instant(seconds: t))?.x ?? 0
            let before = lastX
            t += 1.0 / 60
            let next = player.act(now: Instant(seconds: t))?.x ?? 0
            #expect(next <= before + 0.001 || next < 160, "at \(t) s the hand moved toward a puck it cannot see yet")
            lastX = next
        }
        for _ in 0..<90 {
            t += 1.0 / 60
            lastX = player.act(now: Instant(seconds: t))?.x ?? 0
        }
        #expect(lastX > 160, "once seen, the puck on the right draws the hand (at \(lastX))")
    }

    @Test(
        "the hand keeps within its top speed and acceleration, and within its half",
        arguments: HumanPlayer.Skill.allCases)
    func theHandMovesLikeAHand(skill: HumanPlayer.Skill) {
        let limits = HumanPlayer.parameters(skill)
        var player = HumanPlayer(skill: skill, seed: 11)
        // From where the hand rests, at rest.
        var previous: (x: Float, y: Float)? = player.handPosition
        var previousVelocity: (x: Float, y: Float) = (0, 0)
        var fastest: Float = 0
        for tick in 0..<600 {
            // The puck flips from corner to corner every second: the hand has far to go, again and again.
            let right = (tick / 60) % 2 == 0
            player.observe(
                Self.snapshot(tick: UInt32(tick), puck: (right ? 270 : 50, right ? 420 : 290, 0, 0)),
                at: Instant(seconds: Double(tick) / 60))
            guard let input = player.act(now: Instant(seconds: Double(tick) / 60)) else { continue }
            #expect((40...280).contains(input.x) && (280...440).contains(input.y))
            if let previous {
                let velocity = (x: input.x - previous.x, y: input.y - previous.y)
                let speed = (velocity.x * velocity.x + velocity.y * velocity.y).squareRoot()
                fastest = max(fastest, speed)
                #expect(speed <= limits.maxSpeed + 0.01, "\(speed) px/tick")
                // It gathers speed no faster than its acceleration (arriving, it stops on its aim point at once).
                let before = (previousVelocity.x * previousVelocity.x + previousVelocity.y * previousVelocity.y)
                    .squareRoot()
                #expect(speed <= before + limits.acceleration + 0.01, "\(before) → \(speed) px/tick in one tick")
                previousVelocity = velocity
            }
            previous = (input.x, input.y)
        }
        #expect(fastest > limits.maxSpeed * 0.9, "it does reach its top speed (\(fastest))")
    }

    /// Goals for and against of `bottom` over `seconds` of play, the match restarted whenever it ends.
    static func goals(
        _ bottom: HumanPlayer.Skill, against top: HumanPlayer.Skill, seconds: Int, seed: UInt64
    ) -> (scored: Int, conceded: Int) {
        var scored = 0
        var conceded = 0
        var round: UInt64 = 0
        var left = seconds * 60
        while left > 0 {
            var table = LockstepTable(
                bottom: HumanPlayer(skill: bottom, seed: seed &+ round),
                top: HumanPlayer(skill: top, seed: seed &+ 99 &+ round),
                bottomLink: .init(latency: 0.02, jitter: 0.005), topLink: .init(latency: 0.02, jitter: 0.005),
                seed: seed &+ round)
            let before = left
            while left > 0, table.match.phase != .over {
                table.step()
                left -= 1
            }
            scored += Int(table.match.score0)
            conceded += Int(table.match.score1)
            round += 1
            if before == left { break }
        }
        return (scored, conceded)
    }

    @Test("skill shows: over ten minutes of play each level outscores the one below, and beginners still score")
    func skillShowsInMatches() {
        let skilled = Self.goals(.skilled, against: .casual, seconds: 600, seed: 10)
        let casual = Self.goals(.casual, against: .beginner, seconds: 600, seed: 9)
        let gap = Self.goals(.skilled, against: .beginner, seconds: 600, seed: 8)
        #expect(skilled.scored > skilled.conceded, "skilled vs casual \(skilled)")
        #expect(casual.scored > casual.conceded, "casual vs beginner \(casual)")
        #expect(gap.scored > gap.conceded, "skilled vs beginner \(gap)")
        // Goals happen at every level: a beginner is no statue.
        let beginners = Self.goals(.beginner, against: .beginner, seconds: 600, seed: 7)
        #expect(beginners.scored + beginners.conceded >= 10, "beginner vs beginner \(beginners)")
        #expect(casual.conceded > 0, "a beginner scores against a casual player")
    }
}
