import SkirmishGames
import SkirmishWire

/// Aiming: which way to send the puck, and how to drive so the hit really sends it there.
extension Opponent {
    /// The direction of the best shot from `puck` (own frame), turned by this strike's aim noise; `nil` when no
    /// candidate scores, or for a puck too deep to get behind.
    ///
    /// Of the directions every 0.05 rad (about 3°) within 1.2 rad of straight up the table — direct shots and, past
    /// about 25°, shots banked off a side wall — it keeps the one whose free path at the hit speed enters the far goal
    /// at least ``postMargin`` inside a post and scores best on ``shotScore(clearance:ticksToRival:ticksToGoal:)``:
    /// far from where the other paddle can be when the puck passes its depth, and soon. A paddle already touching the
    /// puck when it is struck cannot hit it again until they part (the rules' contact flag), so then every scoring
    /// path is open. Each path is the closed form of the shared physics (``flight(from:velocity:to:)``), not a
    /// simulation: 49 candidates cost less than one simulated shot.
    func shotDirection(from puck: Point, them: Point, themTouching: Bool = false) -> Point? {
        guard puck.y <= Self.deep else { return nil }
        let speed = hitSpeed
        let noise = aimOffset / 400
        let depth = min(max(them.y, 40), 200)
        var best: (angle: Float, score: Float)?
        for step in -24...24 {
            let angle = Float(step) * 0.05
            let direction = Point(x: Self.sine(angle), y: -Self.cosine(angle))
            let velocity = direction * speed
            guard let goal = Self.flight(from: puck, velocity: velocity, to: 0),
                let line = Self.flight(from: puck, velocity: velocity, to: PuckConstants.puckRadius),
                Self.inMouth(goal.x), Self.inMouth(line.x)
            else { continue }
            let rival = Self.flight(from: puck, velocity: velocity, to: depth) ?? goal
            let clearance = themTouching ? Self.openClearance : abs(rival.x - them.x)
            let score = Self.shotScore(clearance: clearance, ticksToRival: rival.ticks, ticksToGoal: goal.ticks)
            if score > best?.score ?? -.infinity { best = (angle, score) }
        }
        guard let angle = best?.angle else { return nil }
        return Point(x: Self.sine(angle + noise), y: -Self.cosine(angle + noise))
    }

    /// How good a shot is: the sideways gap between its path and the other paddle where the puck passes that paddle's
    /// depth, less what a paddle moving ``rivalDrift`` px a tick closes in the time, capped at ``openClearance``
    /// (beyond that every shot is open and the sooner one is better), less a little for every tick to the goal.
    static func shotScore(clearance: Float, ticksToRival: Float, ticksToGoal: Float) -> Float {
        min(clearance - rivalDrift * ticksToRival, openClearance) - 0.25 * ticksToGoal
    }

    /// The sideways speed, px per tick, a shot assumes the other paddle closes in on it.
    static let rivalDrift: Float = 2
    /// A gap this wide (well past contact distance, the width of the goal mouth) counts as wide open.
    static let openClearance: Float = 160
    /// A shot must enter the mouth this far inside a post: aim noise and quantisation move it a little.
    static let postMargin: Float = 7

    static func inMouth(_ x: Float) -> Bool {
        x >= PuckConstants.goalMouth.lowerBound + postMargin && x <= PuckConstants.goalMouth.upperBound - postMargin
    }

    /// Where a free puck from `start` with `velocity` (own frame, moving up the table) first reaches the line
    /// y = `line`: after how many ticks, and at which x, side-wall bounces folded in. `nil` when it stops first.
    ///
    /// The closed form of the physics' free flight: each axis's speed falls by the friction every tick while above
    /// the rest speed, so after n ticks an axis has covered n·s − f·n(n+1)/2; a side wall reflects the x path, which
    /// is the unfolded path folded back onto the table. Exact to within the physics' quantisation (well under a
    /// pixel over a table's length) while the puck meets no paddle and no end wall.
    static func flight(from start: Point, velocity: Point, to line: Float) -> (ticks: Float, x: Float)? {
        let distance = start.y - line
        guard distance > 0 else { return (0, start.x) }
        let f = PuckConstants.friction
        let up = -velocity.y
        guard up > PuckConstants.restSpeed else { return nil }
        // n·up − f·n(n+1)/2 = distance, the smaller root: the first tick at or past the line.
        let b = up - f / 2
        let discriminant = b * b - 2 * f * distance
        guard discriminant >= 0 else { return nil }
        let ticks = ((b - discriminant.squareRoot()) / f).rounded(.up)
        let across = abs(velocity.x)
        let slowing = min(ticks, max(((across - PuckConstants.restSpeed) / f).rounded(.up), 0))
        let covered =
            slowing * across - f * slowing * (slowing + 1) / 2 + (ticks - slowing) * max(across - f * slowing, 0)
        let x = start.x + (velocity.x < 0 ? -covered : covered)
        let r = PuckConstants.puckRadius
        return (ticks, fold(x, r, PuckConstants.width - r))
    }
    /// The speed a strike gives the puck: 1.5 × the drive's speed, within the hit range.
    var hitSpeed: Float {
        let drive = min(configuration.speedCap, runUp / Float(driveTicks))
        return min(
            max(drive * PuckConstants.hitFactor, PuckConstants.hitSpeed.lowerBound), PuckConstants.hitSpeed.upperBound)
    }

    /// The drive target whose hit, simulated with the shared physics from the predicted table, makes the best shot.
    ///
    /// Driving straight at the puck along the wanted direction is not enough: the puck moves during the run, so the
    /// contact normal — which alone sets where a hit sends the puck — turns away from the line of approach. The
    /// opponent tries 13 directions (the wanted one turned by up to ±0.6 rad in steps of 0.1), each both as a drive
    /// through the puck and as a drive that stops on the line just inside contact (a puck running at the paddle is
    /// met where it will be), with its commanded position moving at the speed cap and the other paddle held. A hit
    /// whose free path scores is rated like a shot (``shotScore(clearance:ticksToRival:ticksToGoal:)``, less a little
    /// for straying from the aim); one that misses, by how far it strays. The best rated drive is taken.
    func aimedDrive(on table: PuckMatch, meet: Meeting, from start: Point) -> Point {
        let cap = configuration.speedCap
        // The other paddle holds still, its target in its own frame.
        let other = table.paddle(of: 1 - seat)
        let hold = PuckMatch.view(x: other.x, y: other.y, seat: 1 - seat)
        let them = PuckTarget(x: hold.x, y: hold.y)
        let rivalDepth = min(max(hold.y, 40), 200)
        let rival = Point(x: hold.x, y: hold.y)
        var best: (turn: Float, quality: Float, target: Point)?
        func consider(_ turn: Float, reach: Float) {
            let (sine, cosine) = (Self.sine(turn), Self.cosine(turn))
            let d = Point(
                x: meet.direction.x * cosine - meet.direction.y * sine,
                y: meet.direction.x * sine + meet.direction.y * cosine)
            let target = (meet.puck + d * reach).confined()
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
                    let velocity = Point(x: puck.vx, y: puck.vy)
                    let error = 1 - velocity.normalised(or: d).dot(meet.direction)
                    // A hit that scores is judged like a shot; one that does not, by how far it is off the aim.
                    var quality = -100 - 100 * error
                    let from = Point(x: puck.x, y: puck.y)
                    if let goal = Self.flight(from: from, velocity: velocity, to: 0),
                        let line = Self.flight(from: from, velocity: velocity, to: PuckConstants.puckRadius),
                        Self.inMouth(goal.x), Self.inMouth(line.x)
                    {
                        let passing = Self.flight(from: from, velocity: velocity, to: rivalDepth) ?? goal
                        quality =
                            Self.shotScore(
                                clearance: abs(passing.x - rival.x), ticksToRival: passing.ticks,
                                ticksToGoal: goal.ticks)
                            - 20 * error
                    }
                    if quality > best?.quality ?? -.infinity { best = (turn, quality, target) }
                    return
                }
            }
        }
        // Drives through the puck, and drives that stop on the line of the shot just inside contact: a puck running
        // at the paddle is met where it will be, not where it was.
        for turn in -6...6 {
            consider(Float(turn) * 0.1, reach: 14)
            consider(Float(turn) * 0.1, reach: -48)
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
