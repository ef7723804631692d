import SkirmishGames
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishOpponent

/// Shots over a slow link are blocked where they cross the defence line; over a quick one they are struck back.
///
/// Corner shots from the shot machine's generator, served at an expert in seat 1 over a simulated link in lock-step
/// and judged by the same ``ShotReferee`` the server uses.
@Suite(.ownThread) struct BlockingTests {
    struct Outcome {
        var saves = 0
        var errors: [Float] = []
        /// Shots first touched by a paddle standing on the defence line (within 3 px), and the rest.
        var touchedOnTheLine = 0
        var touchedElsewhere = 0
        /// Shots the first touch sent away with pace (8 px/tick or more: a paddle driving through the puck), and
        /// those it left slow (a paddle standing in the way gives the puck only the rules' least hit speed).
        var struck = 0
        var stopped = 0

        var medianError: Float { errors.isEmpty ? .infinity : errors.sorted()[errors.count / 2] }
    }

    static func shots(_ count: Int, latency: Double, seed: UInt64) -> Outcome {
        let link = LockstepTable<Idle, Opponent>.Link(latency: latency, jitter: latency / 5, loss: 0.02)
        var table = LockstepTable(
            bottom: Idle(),
            top: Opponent(seat: 1, configuration: OpponentConfiguration(difficulty: .expert), seed: seed),
            bottomLink: .init(), topLink: link, seed: seed)
        for _ in 0..<120 { table.step() }
        var random = SeededRandom(seed: seed ^ 0xB10C)
        var result = Outcome()
        for index in 0..<count {
            let shot = PuckShot.corner(banked: index % 2 == 1, using: &random)
            var touched = false
            let (outcome, referee) = table.shoot(shot, at: 1) { referee, match in
                guard !touched, referee.touched else { return }
                touched = true
                let paddle = match.paddle(of: 1)
                let own = PuckMatch.view(x: paddle.x, y: paddle.y, seat: 1)
                if abs(own.y - Opponent.defenceLine) <= 3 {
                    result.touchedOnTheLine += 1
                } else {
                    result.touchedElsewhere += 1
                }
                let puck = match.puck
                if puck.vx * puck.vx + puck.vy * puck.vy >= 64 {
                    result.struck += 1
                } else {
                    result.stopped += 1
                }
            }
            if outcome.isSave { result.saves += 1 }
            if let error = referee.interceptError { result.errors.append(error) }
            for _ in 0..<20 { table.step() }
        }
        return result
    }

    /// At 150 ms one way the expert stands on each shot's line: most shots are met by a paddle on the defence line,
    /// they are saved, and the paddle is where the shot crosses the line when it does (the physical intercept error).
    @Test func shotsOverASlowLinkAreBlockedOnTheirLine() {
        let run = Self.shots(60, latency: 0.15, seed: 31)
        #expect(run.saves >= 54, "saved \(run.saves) of 60")
        #expect(run.medianError < 15, "median intercept error \(run.medianError) px")
        #expect(
            run.touchedOnTheLine > 3 * run.touchedElsewhere,
            "\(run.touchedOnTheLine) met on the line, \(run.touchedElsewhere) elsewhere")
    }

    /// Without latency the expert mostly strikes shots back with pace (a shot it is already waiting for runs into
    /// its paddle before the drive).
    @Test func shotsOverAQuickLinkAreStruckBack() {
        let quick = Self.shots(30, latency: 0, seed: 32)
        #expect(quick.saves >= 29, "saved \(quick.saves) of 30")
        #expect(quick.struck > quick.stopped, "\(quick.struck) struck back, \(quick.stopped) stopped")
    }

    /// The block spot is where the untouched puck crosses the defence line, if that is not long before the
    /// opponent's inputs can act; a puck going away has none.
    @Test(arguments: [0, 1])
    func theBlockSpotIsTheFreeCrossingOfTheDefenceLine(seat: Int) throws {
        let opponent = Opponent(seat: seat, configuration: OpponentConfiguration(difficulty: .expert))
        // Coming down the opponent's own frame (as its snapshots are), at x = 100 there.
        let own = TableSnapshot.Puck(x: 100, y: 200, vx: 0, vy: 12, angle: 0, spin: 0)
        let path = PuckPath(
            followingCanonical: opponent.ownView(own), defender: seat, line: Opponent.defenceLine, maxTicks: 60)
        let crossing = try #require(path.crossingTicks)
        let free = try #require(opponent.freeCrossing(from: Self.snapshot(puck: own), ticks: 60))
        let spot = Point(x: 100, y: Opponent.defenceLine)
        let block = opponent.blockSpot(crossing: free, after: 3, paddle: Point(x: 160, y: 425))
        #expect(block?.spot == spot)
        #expect(block?.ticks == crossing)
        // Up to the grace before the inputs can act, for a paddle already there; never for one that cannot get
        // there in time.
        let grace = Opponent.blockGrace
        #expect(opponent.blockSpot(crossing: free, after: crossing + grace, paddle: spot) != nil)
        #expect(opponent.blockSpot(crossing: free, after: crossing + grace + 1, paddle: spot) == nil)
        #expect(
            opponent.blockSpot(crossing: free, after: crossing + grace - 1, paddle: Point(x: 280, y: 280)) == nil)
        let away = TableSnapshot.Puck(x: 100, y: 300, vx: 0, vy: -12, angle: 0, spin: 0)
        #expect(opponent.freeCrossing(from: Self.snapshot(puck: away), ticks: 60) == nil)
    }

    /// A snapshot of play with `puck` (own frame) and the paddles at their start spots.
    static func snapshot(puck: TableSnapshot.Puck) -> TableSnapshot {
        TableSnapshot(
            tick: 100, lastInputStep: 0, me: .init(x: 160, y: 400, vx: 0, vy: 0),
            them: .init(x: 160, y: 80, vx: 0, vy: 0), puck: puck, myScore: 0, theirScore: 0, phase: .playing,
            stateHash: 0)
    }
}
