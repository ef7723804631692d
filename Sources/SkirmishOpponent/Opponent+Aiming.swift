import SkirmishGames
import SkirmishWire

/// Aiming: which way to send the puck, and how to drive so the hit really sends it there.
extension Opponent {
    /// The direction of the best shot from `puck` (own frame), found by following candidate shots with the shared
    /// physics: of the directions every 6° within 60° of straight up the table, refined to 1.5° around the best, the
    /// one whose free path at the hit speed goes into the far goal and passes farthest from the other paddle at that
    /// paddle's depth (ties go to the faster shot), turned by this strike's aim noise. `nil` when no candidate
    /// scores, or for a puck too deep to get behind.
    ///
    /// A straight line is not good enough here: friction takes the same 0.1 px/tick off each axis, so a slanted shot
    /// bends toward the straight-up direction, and a banked one falls short of the mouth. Neither is a coarse search:
    /// the open side of a goal is often only some 20 px wide at 300 px, about 4°.
    func shotDirection(from puck: Point, them: Point) -> Point? {
        guard puck.y <= Self.deep else { return nil }
        let speed = hitSpeed
        let depth = min(max(them.y, 40), 200)
        let noise = aimOffset / 400
        var best: (angle: Float, score: Float)?
        func consider(_ angle: Float) {
            let direction = Point(x: Self.sine(angle + noise), y: -Self.cosine(angle + noise))
            let own = TableSnapshot.Puck(
                x: puck.x, y: puck.y, vx: direction.x * speed, vy: direction.y * speed, angle: 0, spin: 0)
            var canonical = ownView(own)
            var passed: Float?
            var ticks = 0
            while ticks < 90 {
                ticks += 1
                if let scorer = PuckMatch.advanceFreePuck(&canonical) {
                    guard scorer == seat else { return }
                    let open = min(abs((passed ?? puck.x) - them.x), 90)
                    let score = open - Float(ticks) * 0.2
                    if score > best?.score ?? -.infinity { best = (angle, score) }
                    return
                }
                let now = ownView(canonical)
                if passed == nil, now.y <= depth { passed = now.x }
                if now.vy >= 0 { return }
            }
        }
        for step in -10...10 { consider(Float(step) * Self.coarseShotStep) }
        guard let coarse = best?.angle else { return nil }
        for fine in [-2, -1, 1, 2] as [Float] { consider(coarse + fine * Self.coarseShotStep / 4) }
        guard let angle = best?.angle else { return nil }
        return Point(x: Self.sine(angle + noise), y: -Self.cosine(angle + noise))
    }

    /// 6°, the coarse step of ``shotDirection(from:them:)``.
    static let coarseShotStep: Float = 0.1047

    /// The speed a strike gives the puck: 1.5 × the drive's speed, within the hit range.
    var hitSpeed: Float {
        let drive = min(configuration.speedCap, runUp / Float(driveTicks))
        return min(
            max(drive * PuckConstants.hitFactor, PuckConstants.hitSpeed.lowerBound), PuckConstants.hitSpeed.upperBound)
    }

    /// The drive target whose hit, simulated with the shared physics from the predicted table, sends the puck
    /// closest to the meeting's direction.
    ///
    /// Driving straight at the puck along the wanted direction is not enough: the puck moves during the run, so the
    /// contact normal — which alone sets where a hit sends the puck — turns away from the line of approach. The
    /// opponent tries the straight drive and six turned ones (±0.1, ±0.2, ±0.3 rad), then ±0.05 and ±0.025 rad
    /// around the best, each with its commanded position moving at the speed cap and the other paddle held, and keeps
    /// the one whose hit leaves closest to the wanted direction.
    func aimedDrive(on table: PuckMatch, meet: Meeting, from start: Point) -> Point {
        let cap = configuration.speedCap
        // The other paddle holds still, its target in its own frame.
        let other = table.paddle(of: 1 - seat)
        let hold = PuckMatch.view(x: other.x, y: other.y, seat: 1 - seat)
        let them = PuckTarget(x: hold.x, y: hold.y)
        var best: (turn: Float, error: Float, target: Point)?
        func consider(_ turn: Float) {
            let (sine, cosine) = (Self.sine(turn), Self.cosine(turn))
            let d = Point(
                x: meet.direction.x * cosine - meet.direction.y * sine,
                y: meet.direction.x * sine + meet.direction.y * cosine)
            let target = (meet.puck + d * 14).confined()
            var sim = table
            var commanded = start
            for _ in 0..<(min(meet.ticks, 12) + 4) {
                commanded = (commanded + (target - commanded).clamped(toLength: cap)).confined()
                let mine = PuckTarget(x: commanded.x, y: commanded.y)
                let before = ownView(sim.puck)
                let events = seat == 0 ? sim.step(mine, them) : sim.step(them, mine)
                if events.goal != nil || sim.phase != .playing { return }
                let paddle = ownView(sim.paddle(of: seat))
                let puck = ownView(sim.puck)
                if (Point(x: puck.x, y: puck.y) - paddle).length < PuckConstants.contactDistance + 1,
                    puck.vx != before.vx || puck.vy != before.vy, puck.vy < 0
                {
                    let error = 1 - Point(x: puck.vx, y: puck.vy).normalised(or: d).dot(meet.direction)
                    if error < best?.error ?? .infinity { best = (turn, error, target) }
                    return
                }
            }
        }
        for turn in -3...3 { consider(Float(turn) * 0.1) }
        if let coarse = best?.turn {
            for fine in [-0.05, -0.025, 0.025, 0.05] as [Float] { consider(coarse + fine) }
        }
        return best?.target ?? (meet.puck + meet.direction * 14).confined()
    }

    /// Sine and cosine for angles within ±1.2 rad, by Taylor series to the 9th power (error below 10⁻⁵ there): the
    /// module needs no libm.
    static func sine(_ x: Float) -> Float {
        let x2 = x * x
        return x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72))))
    }

    static func cosine(_ x: Float) -> Float {
        let x2 = x * x
        return 1 - x2 / 2 * (1 - x2 / 12 * (1 - x2 / 30 * (1 - x2 / 56 * (1 - x2 / 90))))
    }

    /// A quick estimate of the direction a hit from `puck` should take, used while scanning the puck's path for a
    /// meeting point (``shotDirection(from:them:)`` refines the chosen one): the straight line — at a post, or banked
    /// off a side wall — that passes farthest from the other paddle at its depth, never flatter than about 24°.
    func aimDirection(from puck: Point, them: Point) -> Point {
        // Deeper than the paddle can get behind: sweep it sideways, out of the goal mouth toward the nearer wall.
        if puck.y > Self.deep { return Point(x: puck.x < 160 ? -0.917 : 0.917, y: -0.4) }
        let left = PuckConstants.puckRadius
        let right = PuckConstants.width - PuckConstants.puckRadius
        let goalY: Float = -PuckConstants.puckRadius
        let depth = min(max(them.y, 40), 200)
        var best = Point(x: 0, y: -1)
        var bestScore = -Float.infinity
        for post in 0..<2 {
            let x = (post == 0 ? Self.posts.lowerBound : Self.posts.upperBound) + aimOffset
            for bank in 0..<3 {
                let image = bank == 0 ? x : bank == 1 ? 2 * left - x : 2 * right - x
                let direction = (Point(x: image, y: goalY) - puck).normalised(or: Point(x: 0, y: -1))
                guard direction.y <= -0.4 else { continue }
                // Where the unfolded line meets the other paddle's depth, folded back onto the table.
                let t = (depth - puck.y) / direction.y
                let open = abs(Self.fold(puck.x + direction.x * t, left, right) - them.x)
                let score = open - (bank == 0 ? 0 : Self.bankPenalty)
                if score > bestScore {
                    bestScore = score
                    best = direction
                }
            }
        }
        return best
    }

    /// Aim points inside the far goal mouth, near its posts.
    static let posts: ClosedRange<Float> = 88...232
    /// A bank shot loses speed and time on the wall: prefer a direct shot unless the bank is this much more open.
    static let bankPenalty: Float = 20

    /// `x` reflected back into `low...high` (the path of a puck bouncing between side walls).
    static func fold(_ x: Float, _ low: Float, _ high: Float) -> Float {
        let width = high - low
        var v = (x - low).truncatingRemainder(dividingBy: 2 * width)
        if v < 0 { v += 2 * width }
        return low + (v > width ? 2 * width - v : v)
    }
}
