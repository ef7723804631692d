import SkirmishGames
import SkirmishWire

/// Aiming: which way to send the puck, and how to drive so the hit really sends it there.
extension Opponent {
    /// The direction of the best shot from `puck` (own frame), turned by this strike's aim noise; `nil` when no
    /// candidate scores, or for a puck too deep to get behind.
    ///
    /// Of the directions every 0.05 rad (about 3°) within 1.2 rad of straight up the table — direct shots and, past
    /// about 25°, shots banked off a side wall — it keeps the one whose free path at the hit speed enters the far goal
    /// at least ``postMargin`` inside a post and rates best in the style the read of the other player calls for
    /// (``shotScore(from:velocity:them:style:lag:themTouching:)``). Each path is the closed form of the shared physics
    /// (``flight(from:velocity:to:)``, ``lastTurn(from:velocity:within:)``), not a simulation: 49 candidates cost
    /// less than one simulated shot.
    func shotDirection(from puck: Point, them: Point, themTouching: Bool = false) -> Point? {
        guard puck.y <= Self.deep,
            let best = Self.bestShot(
                from: puck, speed: hitSpeed, them: them, style: rival.style, lag: rivalLag, themTouching: themTouching)
        else { return nil }
        let angle = best.angle + aimOffset / 400
        return Point(x: Self.sine(angle), y: -Self.cosine(angle))
    }

    /// The best-rated of the 49 candidate directions at `speed` (its angle from straight up the table, and its
    /// rating), or `nil` when none scores.
    static func bestShot(
        from puck: Point, speed: Float, them: Point, style: AttackStyle, lag: Float, themTouching: Bool = false
    ) -> (angle: Float, score: Float)? {
        var best: (angle: Float, score: Float)?
        for step in -24...24 {
            let angle = Float(step) * 0.05
            let direction = Point(x: sine(angle), y: -cosine(angle))
            guard
                let score = shotScore(
                    from: puck, velocity: direction * speed, them: them, style: style, lag: lag,
                    themTouching: themTouching)
            else { continue }
            if score > best?.score ?? -.infinity { best = (angle, score) }
        }
        return best
    }

    /// How good a shot from `puck` with `velocity` (own frame) is in `style`, or `nil` when its free path misses the
    /// far goal's mouth (by less than ``postMargin`` inside a post). Higher is better; the two styles' ratings are
    /// not comparable with each other.
    ///
    /// - ``AttackStyle/wide``: the sideways gap between the path and the other paddle where the puck passes that
    ///   paddle's depth, less what a paddle drifting ``rivalDrift`` px a tick sideways closes in the time, capped at
    ///   ``openClearance`` (beyond that every shot is open and the sooner one is better), less a little for every
    ///   tick to the goal. A player who chases the puck must turn and run after such a shot.
    /// - ``AttackStyle/late``: how late the other paddle is to meet the puck. That paddle can go anywhere
    ///   at the server's 40 px/tick, so it is beaten only by what it has not seen yet: it learns where the puck goes
    ///   `lag` ticks after the puck last changed direction — the hit, or the last side-wall bounce before the puck
    ///   reaches it — and from then closes in. The rating is the ticks it would need to come near the path, less
    ///   the ticks it has, where that is least (``lateness(from:velocity:them:lag:goal:)``). A bank shot that turns
    ///   late is the one a quick goalkeeper cannot follow. Every shot it is too late for is rated above every other
    ///   (and above ``openTicks`` the sooner goal is better); when it can reach them all, the one that passes
    ///   farthest from where it stands is best.
    ///
    /// A paddle already touching the puck when it is struck cannot hit it again until they part (the rules' contact
    /// flag): then every scoring path is open (`themTouching`).
    static func shotScore(
        from puck: Point, velocity: Point, them: Point, style: AttackStyle, lag: Float, themTouching: Bool = false
    ) -> Float? {
        guard let goal = scoringFlight(from: puck, velocity: velocity) else { return nil }
        if themTouching { return openClearance - 0.25 * goal.ticks }
        if style == .late {
            // A shot the keeper is too late for beats every other. A path near where the keeper stands now is not
            // open either, however late it turns; it is rated like any other shot the keeper can reach (rating it
            // lower still gave the no-prediction AI at 150 ms a median match of 100 s instead of 15: a keeper that
            // lags moves on from where it stands before the puck comes).
            let late = lateness(from: puck, velocity: velocity, them: them, lag: lag, goal: goal) ?? 0
            if late > 0 { return 1_000 + late - 0.05 * goal.ticks }
        }
        // The wide shot, or a keeper that can reach every shot: the one that passes farthest from where it stands,
        // less what it closes drifting sideways in the time (a keeper at ``keeperDrift``: it is in the way already).
        let rival = flight(from: puck, velocity: velocity, to: min(max(them.y, 40), 200)) ?? goal
        let drift = style == .wide ? rivalDrift : keeperDrift
        return clearance(abs(rival.x - them.x), after: rival.ticks, drift: drift, goalTicks: goal.ticks)
    }

    /// Where `velocity` from `puck` crosses the far goal line, or `nil` when its free path misses the mouth (by less
    /// than ``postMargin`` inside a post, at the line and a puck radius in front of it).
    static func scoringFlight(from puck: Point, velocity: Point) -> (ticks: Float, x: Float)? {
        guard let goal = flight(from: puck, velocity: velocity, to: 0),
            let line = flight(from: puck, velocity: velocity, to: PuckConstants.puckRadius),
            inMouth(goal.x), inMouth(line.x)
        else { return nil }
        return goal
    }

    /// A wide-open rating: a sideways `gap` (px), less what a paddle drifting `drift` px a tick closes in the `after`
    /// ticks, capped at ``openClearance``, less a little for every tick to the goal.
    static func clearance(_ gap: Float, after ticks: Float, drift: Float, goalTicks: Float) -> Float {
        min(gap - drift * ticks, openClearance) - 0.25 * goalTicks
    }

    /// The ``AttackStyle/late`` rating's core: how many ticks too late the other paddle at `them`, `lag` ticks behind
    /// the table, is to come within contact distance (and ``aimMargin``) of the shot's path (at most ``openTicks``; 0
    /// or less: it can make it), taken where it is least: where the puck passes the paddle's depth, 30 and 60 px to
    /// either side of it, and the front of its goal. `nil` for a path that passes that near where the paddle already
    /// is: it needs no reaction at all, and is never open.
    static func lateness(
        from puck: Point, velocity: Point, them: Point, lag: Float, goal: (ticks: Float, x: Float)
    ) -> Float? {
        var late = openTicks
        let depth = min(max(them.y, 40), 200)
        // Across the paddle's reach in depth (contact distance either side of it), and in front of its goal.
        for line in [depth + 60, depth + 30, depth, depth - 30, depth - 60, 45] where line > 20 && line < puck.y {
            let passing = flight(from: puck, velocity: velocity, to: line) ?? goal
            let gap = (Point(x: passing.x, y: line) - them).length - PuckConstants.contactDistance - aimMargin
            guard gap > 0 else { return nil }
            let turn = lastTurn(from: puck, velocity: velocity, within: passing.ticks)
            late = min(late, gap / PuckConstants.maxPaddleStep - max(passing.ticks - turn - lag, 0))
        }
        return late
    }

    /// How good the hit of a ``AttackStyle/wide`` shot's drive is, or `nil` when its free path misses the far
    /// goal's mouth: the drives are tried within 0.6 rad of the widest shot, and of those the best enters the other
    /// half (y = 200) soonest and farthest from the point opposite the other paddle across the table's middle — on
    /// that player's own side. A player who comes out for the puck goes for it there, and is left chasing it back
    /// across to the far side of its goal; a paddle that catches a puck from behind knocks it in. Measured against the
    /// chaser over 50 ms in lock-step (40 matches, three seeds): 23 of 40 reached 7 within 3 minutes, against 10 for
    /// the drive rated like the shot itself, farthest from the paddle.
    static func drawScore(from puck: Point, velocity: Point, them: Point) -> Float? {
        guard let goal = scoringFlight(from: puck, velocity: velocity) else { return nil }
        let entry = flight(from: puck, velocity: velocity, to: 200) ?? goal
        let opposite = PuckConstants.width - them.x
        return clearance(abs(entry.x - opposite), after: entry.ticks, drift: rivalDrift, goalTicks: goal.ticks)
    }

    /// The sideways speed, px per tick, a ``AttackStyle/wide`` shot assumes a player who comes out for the puck
    /// closes in on it (tuned against the chaser over 50 ms, where the wide style is slowest: 2, 4 and 6 px/tick
    /// finished 19, 22 and 24 of 40 lock-step matches to 7 within 3 minutes, averaged over three seeds).
    static let rivalDrift: Float = 6
    /// The same for a goalkeeper that no shot is open against: it is in the way already, and a long shot past it
    /// loses little to its drift (at 6 px/tick a keeper standing still is struck into more often).
    static let keeperDrift: Float = 2
    /// A gap this wide counts as wide open: beyond it the sooner shot is better (250 px, most of the table's width:
    /// in practice the wider shot is always the better one; 160 finished fewer matches against the chaser).
    static let openClearance: Float = 250
    /// How far, px, a ``AttackStyle/late`` shot keeps beyond contact distance from where the other paddle can be:
    /// the aim noise and the hit's quantisation move a shot a little.
    static let aimMargin: Float = 16
    /// A ``AttackStyle/late`` shot this many ticks out of the other paddle's reach is wide open.
    static let openTicks: Float = 4

    /// The ticks the other paddle is taken to be behind the table: it sees a snapshot a one-way trip late (every
    /// second tick) and its answer takes another to arrive, so its lag is about this opponent's own round trip plus
    /// three ticks — assuming the other player's link is like this one's. A person's reaction only adds to it.
    var rivalLag: Float {
        Float(estimator.smoothedRTT * Double(PuckConstants.tickRate)) + Float(PuckConstants.snapshotEvery) + 1
    }

    /// When a free puck from `start` with `velocity` last bounced off a side wall within its first `ticks` ticks, in
    /// ticks after the start; 0 when it went straight.
    static func lastTurn(from start: Point, velocity: Point, within ticks: Float) -> Float {
        let across = abs(velocity.x)
        guard across > PuckConstants.restSpeed else { return 0 }
        let r = PuckConstants.puckRadius
        let width = PuckConstants.width - 2 * r
        let first = velocity.x < 0 ? start.x - r : PuckConstants.width - r - start.x
        let covered = covered(across, in: ticks)
        guard covered >= first else { return 0 }
        let walls = ((covered - first) / width).rounded(.down)
        return self.ticks(toCover: first + walls * width, at: across)
    }

    /// The distance one axis covers in `ticks` ticks from speed `speed`: n·s − f·n(n+1)/2 while above the rest
    /// speed, then the rest speed on.
    static func covered(_ speed: Float, in ticks: Float) -> Float {
        let f = PuckConstants.friction
        let slowing = min(ticks, max(((speed - PuckConstants.restSpeed) / f).rounded(.up), 0))
        return slowing * speed - f * slowing * (slowing + 1) / 2 + (ticks - slowing) * max(speed - f * slowing, 0)
    }

    /// The first tick by which one axis moving at `speed` has covered `distance` (the inverse of
    /// ``covered(_:in:)``).
    static func ticks(toCover distance: Float, at speed: Float) -> Float {
        guard distance > 0 else { return 0 }
        let f = PuckConstants.friction
        let b = speed - f / 2
        let discriminant = b * b - 2 * f * distance
        let slowing = max(((speed - PuckConstants.restSpeed) / f).rounded(.up), 0)
        if discriminant >= 0 {
            let n = ((b - discriminant.squareRoot()) / f).rounded(.up)
            if n <= slowing { return n }
        }
        let rest = max(speed - f * slowing, PuckConstants.quantum)
        return slowing + ((distance - covered(speed, in: slowing)) / rest).rounded(.up)
    }

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
        let across = covered(abs(velocity.x), in: ticks)
        let x = start.x + (velocity.x < 0 ? -across : across)
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
    /// whose free path scores is rated like a shot (``shotScore(from:velocity:them:style:lag:themTouching:)``, less
    /// a little for straying from the aim); one that misses, by how far it strays. The best rated drive is taken.
    func aimedDrive(on table: PuckMatch, meet: Meeting, from start: Point) -> Point {
        let cap = configuration.speedCap
        // The other paddle holds still, its target in its own frame; the shots are rated in this opponent's.
        let other = table.paddle(of: 1 - seat)
        let hold = PuckMatch.view(x: other.x, y: other.y, seat: 1 - seat)
        let them = PuckTarget(x: hold.x, y: hold.y)
        let rivalSpot = ownView(other)
        let style = rival.style
        let lag = rivalLag
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
                    let score =
                        style == .wide
                        ? Self.drawScore(from: from, velocity: velocity, them: rivalSpot)
                        : Self.shotScore(from: from, velocity: velocity, them: rivalSpot, style: style, lag: lag)
                    if let score { quality = score - 20 * error }
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
