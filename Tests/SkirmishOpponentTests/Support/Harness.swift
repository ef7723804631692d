import SkirmishGames
import SkirmishOpponent
import SkirmishWire

/// A player that never moves: the shot machine's shooter.
struct Idle: PuckAgent {
    mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {}
    mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {}
    mutating func act(now: Instant) -> PaddleState? { nil }
}

/// Shots at an opponent in seat 1, in lock-step over a simulated link.
struct ShotRun {
    var saves = 0
    var shots = 0
    /// Per shot: |crossing x of the plan in effect on the server when the puck reached the paddle or the defence
    /// line − where the free puck really crosses it|.
    var interceptErrors: [Float] = []

    var saveRate: Double { shots == 0 ? 0 : Double(saves) / Double(shots) }

    func percentile(_ q: Double) -> Float {
        guard !interceptErrors.isEmpty else { return .nan }
        let sorted = interceptErrors.sorted()
        let index = min(sorted.count - 1, Int((q * Double(sorted.count)).rounded(.up)) - 1)
        return sorted[max(index, 0)]
    }

    static func run(
        _ configuration: OpponentConfiguration, link: LockstepTable<Idle, Opponent>.Link, shots count: Int,
        bounces: Int?, seed: UInt64
    ) -> ShotRun {
        var table = LockstepTable(
            bottom: Idle(), top: Opponent(seat: 1, configuration: configuration, seed: seed),
            bottomLink: .init(), topLink: link, seed: seed)
        for _ in 0..<60 { table.step() }
        var random = SeededRandom(seed: seed ^ 0x5107)
        var result = ShotRun()
        for index in 0..<count {
            let shot = PuckShot.random(bounces: bounces ?? index % 3, using: &random)
            table.match.serve(shot.canonical(defender: 1), resettingScore: true)
            let truth = PuckPath(
                followingCanonical: table.match.puck, defender: 1, line: Opponent.defenceLine, maxTicks: 300)
            var plans = PlanLog(servedAt: table.match.tick)
            var measured = false
            var saved = true
            for k in 1...240 {
                let events = table.step()
                plans.record(table.top.plan, step: table.top.lastInputStep)
                if !measured, let crossX = truth.crossingX, let crossTicks = truth.crossingTicks {
                    let paddle = table.match.paddle(of: 1)
                    let puck = table.match.puck
                    let dx = puck.x - paddle.x
                    let dy = puck.y - paddle.y
                    if dx * dx + dy * dy < 3600 || k >= crossTicks {
                        measured = true
                        result.interceptErrors.append(abs(plans.crossingX(inEffectAt: table.lastInputStep[1]) - crossX))
                    }
                }
                if let goal = events.goal {
                    saved = goal.scorer == 1
                    break
                }
                let own = table.match.puck
                if own.y > 260, own.vy > 0 { break } // cleared: in the shooter's half (canonical top is y < 240)
            }
            result.shots += 1
            if saved { result.saves += 1 }
            for _ in 0..<20 { table.step() }
        }
        return result
    }
}

/// The plans an opponent made during one shot, by input step, to find the crossing it predicted in time.
struct PlanLog {
    let servedAt: UInt32
    private var plans: [(step: UInt32, plan: Plan)] = []

    init(servedAt: UInt32) {
        self.servedAt = servedAt
    }

    mutating func record(_ plan: Plan, step: UInt32) {
        if plans.last?.step != step { plans.append((step, plan)) }
    }

    /// The crossing of the newest plan, among those the server had applied by input step `applied`, that predicted
    /// the crossing from a snapshot taken after the serve; without one, the plan in effect's guess.
    func crossingX(inEffectAt applied: UInt32) -> Float {
        var inEffect: Plan?
        for entry in plans.reversed() where entry.step <= applied {
            if inEffect == nil { inEffect = entry.plan }
            if entry.plan.crossingPredicted, entry.plan.snapshotTick >= servedAt { return entry.plan.crossingX }
        }
        return inEffect?.crossingX ?? 160
    }
}

/// Goals each side scores in lock-step matches.
struct MatchRun {
    var goalsFor = 0
    var goalsAgainst = 0
    var wins = 0
    var losses = 0
    var matches = 0

    static func run<Other: PuckAgent>(
        _ configuration: OpponentConfiguration, against other: (Int) -> Other,
        link: LockstepTable<Opponent, Other>.Link,
        matches count: Int, ticks: Int, seed: UInt64
    ) -> MatchRun {
        var result = MatchRun()
        for index in 0..<count {
            let matchSeed = seed &+ UInt64(index) &* 7919
            var table = LockstepTable(
                bottom: Opponent(seat: 0, configuration: configuration, seed: matchSeed), top: other(index),
                bottomLink: link, topLink: link, seed: matchSeed)
            table.play(limit: ticks)
            let (mine, theirs) = table.match.scores
            result.goalsFor += Int(mine)
            result.goalsAgainst += Int(theirs)
            result.matches += 1
            if mine > theirs { result.wins += 1 }
            if theirs > mine { result.losses += 1 }
        }
        return result
    }
}
