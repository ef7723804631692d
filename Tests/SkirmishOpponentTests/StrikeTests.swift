import SkirmishGames
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishOpponent

/// A paddle that holds one spot (its own frame) whatever happens: a keeper that never moves.
struct Keeper: PuckAgent {
    let x: Float
    let y: Float
    var step: UInt32 = 0

    mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {}
    mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {}

    mutating func act(now: Instant) -> PaddleState? {
        step &+= 1
        return PaddleState(inputStep: step, x: x, y: y, vx: 0, vy: 0)
    }
}

/// The attack: a puck in reach is struck past the other paddle, with the shared physics deciding the outcome (the
/// server's own `PuckMatch` in lock-step, no sockets, no clock), and defence still comes first.
@Suite(.ownThread) struct StrikeTests {
    /// Where a shot from (x, y) with (vx, vy) crosses the far goal line (own frame), by the closed form the aim
    /// uses, against the physics stepping the same puck: straight, slanted both ways, and banked off a side wall.
    @Test(arguments: [
        (Float(160), Float(300), Float(0), Float(-15)), (100, 330, 5, -13.5), (250, 290, -6, -12),
        (60, 400, -7, -14.4),
    ])
    func theClosedFormFlightIsThePhysicsFlight(x: Float, y: Float, vx: Float, vy: Float) throws {
        let predicted = try #require(
            Opponent.flight(from: Point(x: x, y: y), velocity: Point(x: vx, y: vy), to: 0))
        // The bottom seat's frame is the canonical one: the far goal line is y = 0.
        var puck = TableSnapshot.Puck(x: x, y: y, vx: vx, vy: vy, angle: 0, spin: 0)
        var ticks = 0
        var scorer: Int?
        while scorer == nil, puck.y >= 0, ticks < 200 {
            scorer = PuckMatch.advanceFreePuck(&puck)
            ticks += 1
        }
        #expect(scorer == 0)
        #expect(Opponent.inMouth(predicted.x))
        #expect(abs(Float(ticks) - predicted.ticks) <= 1, "ticks \(ticks), predicted \(predicted.ticks)")
        #expect(abs(puck.x - predicted.x) <= 3, "x \(puck.x), predicted \(predicted.x)")
    }

    /// A puck at rest in the AI's half, a keeper standing still in front of the far goal: the expert's strike
    /// scores without touching the keeper.
    @Test(arguments: [(Float(100), Float(430)), (220, 430), (160, 430), (130, 330), (200, 360)])
    func aSlowPuckInReachIsStruckPastAStillKeeper(keeperX: Float, keeperY: Float) {
        var table = LockstepTable(
            bottom: Opponent(seat: 0, configuration: OpponentConfiguration(difficulty: .expert), seed: 3),
            top: Keeper(x: keeperX, y: keeperY), bottomLink: .init(), topLink: .init(), seed: 3)
        for _ in 0..<30 { table.step() }
        table.match.serve(TableSnapshot.Puck(x: 120, y: 345, vx: 0, vy: 0, angle: 0, spin: 0), resettingScore: true)
        var scorer: Int?
        var keeperTouched = false
        for _ in 0..<(60 * 5) {
            let events = table.step()
            let keeper = table.match.paddle(of: 1)
            let puck = table.match.puck
            let dx = puck.x - keeper.x
            let dy = puck.y - keeper.y
            if dx * dx + dy * dy < PuckConstants.contactDistance * PuckConstants.contactDistance {
                keeperTouched = true
            }
            if let goal = events.goal {
                scorer = goal.scorer
                break
            }
        }
        #expect(scorer == 0, "keeper at (\(keeperX), \(keeperY)): no goal for the AI")
        #expect(!keeperTouched)
    }

    /// A puck held by the other paddle (touching it) cannot be hit by it again until they part: the AI takes it at
    /// once in the band both paddles reach and shoots through it. The same puck with the other paddle near but not
    /// touching is left alone for a while (going up for it would invite a close-range shot).
    @Test(arguments: [true, false])
    func aPuckTheOtherPaddleHoldsIsTakenAndShotThroughIt(held: Bool) {
        // Seat 1's frame: (160, 255) is canonical (160, 225), 27 px from the puck; (170, 315) is canonical (150, 165),
        // 85 px away.
        let keeper = held ? Keeper(x: 160, y: 255) : Keeper(x: 170, y: 315)
        var table = LockstepTable(
            bottom: Opponent(seat: 0, configuration: OpponentConfiguration(difficulty: .expert), seed: 4),
            top: keeper, bottomLink: .init(), topLink: .init(), seed: 4)
        for _ in 0..<30 { table.step() }
        table.match.serve(TableSnapshot.Puck(x: 150, y: 250, vx: 0, vy: 0, angle: 0, spin: 0), resettingScore: true)
        var firstTouch: Int?
        var scorer: Int?
        for tick in 1...(60 * 4) {
            let events = table.step()
            let mine = table.match.paddle(of: 0)
            let puck = table.match.puck
            let dx = puck.x - mine.x
            let dy = puck.y - mine.y
            if firstTouch == nil, dx * dx + dy * dy < PuckConstants.contactDistance * PuckConstants.contactDistance {
                firstTouch = tick
            }
            if let goal = events.goal {
                scorer = goal.scorer
                break
            }
        }
        if held {
            #expect((firstTouch ?? .max) < 30, "first touch at tick \(firstTouch ?? -1)")
            #expect(scorer == 0)
        } else {
            #expect((firstTouch ?? .max) > 60, "first touch at tick \(firstTouch ?? -1)")
        }
    }

    /// Attack never comes before defence: straight shots at the expert's goal are still saved.
    @Test(arguments: [0.0, 0.15])
    func defenceStillSavesStraightShots(latency: Double) {
        let run = ShotRun.run(
            OpponentConfiguration(difficulty: .expert), link: .init(latency: latency, jitter: latency / 5, loss: 0.02),
            shots: 60, bounces: 0, seed: 17)
        #expect(run.shots == 60)
        #expect(run.saveRate >= 0.9, "saved \(run.saves) of \(run.shots)")
    }
}
