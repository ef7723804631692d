import SkirmishWire

extension PuckShot {
    /// Where a corner shot ends, in the defender's frame: the outer 16 px of the goal mouth, left and right — outside
    /// the 60 px a paddle at the goal's middle reaches.
    package static let cornerStrips: [ClosedRange<Float>] = [81...96, 224...239]
    /// How fast corner shots are, px per tick: the top 40 % of a hit's range (a hit sends the puck at most
    /// ``PuckConstants/hitSpeed``'s 15), so every shot is one a player can make on this table.
    package static let cornerSpeed: ClosedRange<Float> = 10...15
    /// The least speed, px per tick, a corner shot still has when it enters the goal: a shot, not a puck that rolls
    /// in at walking pace (friction never takes an axis below 0.3 px/tick, so a slow puck drifts on) — a defender
    /// must meet it, not wait for it to stop.
    package static let cornerArrival: Float = 4
    /// The fewest ticks a corner shot takes from its serve to the defence line (puck-centre y = 440, the deepest a
    /// paddle goes, where ``ShotReferee`` measures the intercept error): 0.4 s.
    ///
    /// Served shots come out of nowhere, so a defender's answer starts only when it sees the serve: across a 150 ms
    /// link that is the next snapshot (one or two ticks later), 9 ticks to arrive, 9 for the input to go back and one
    /// to be applied — 20 to 21 ticks, a few more with jitter — and then up to 3 ticks of travel to the crossing. A
    /// faster shot is answered by no paddle at all over that link: it measures the link, not the defender, and with
    /// about 5 % of such shots in the set the intercept error's 95th percentile would be the link's alone. (In a
    /// match a shot is no surprise: the striker's paddle is seen closing in on the puck before the hit.)
    package static let cornerFlightTicks = 24
    /// Where a goalkeeper stands when it does not move, in the defender's frame (the AI's home spot), and how far
    /// from it every corner shot's path stays (contact distance and a margin): a keeper who only stands there never
    /// touches one.
    package static let keeperSpot: (x: Float, y: Float) = (160, 425)
    package static let keeperClearance: Float = 66
    /// Where the shooter's idle paddle stands, in the defender's frame; shots start and pass clear of it.
    package static let shooterSpot: (x: Float, y: Float) = (160, 80)

    /// A seeded shot the way a player beats a goalkeeper: fast, aimed at a corner of the goal, and arriving from that
    /// corner's side — straight from that side of the table, or `banked` off the near side wall (one bounce).
    ///
    /// There are no two-bounce shots: at a hit's speed the table's friction (0.1 px/tick per axis) has taken the
    /// puck's speed down the table to its rest speed before it has crossed the table's width twice — of 100,000
    /// draws aimed that way, 4 scored faster than ``cornerArrival``.
    ///
    /// `skirmish ai-eval` serves these: a paddle that stands still at the AI's home spot, ``keeperSpot``, never touches
    /// their free paths (a test simulates it with the real physics), so a save rate measures moving to the puck, not
    /// standing in the middle. Drawn by rejection: the shared physics must take the shot into an empty goal through
    /// the corner strip, with the bounce count asked for, at least ``cornerArrival`` fast, no sooner than
    /// ``cornerFlightTicks`` at the defence line, and clear of both the keeper and the idle shooter's paddle; at most
    /// 4,000 draws, then the last such shot with the other bounce count, then a direct corner shot, then a plain
    /// ``random(bounces:using:)`` shot that need not keep these properties (none of this is reached in practice: the
    /// 600 shots of the shot-set test all have the bounce count asked for, clear both paddles and take long enough).
    package static func corner(banked: Bool, using random: inout SeededRandom) -> PuckShot {
        let r = PuckConstants.puckRadius
        let left = r
        let right = PuckConstants.width - r
        var fallback: PuckShot?
        for _ in 0..<4_000 {
            let nearLeft = Bool.random(using: &random)
            let strip = cornerStrips[nearLeft ? 0 : 1]
            // Aimed around the strip: friction bends the path, and only where it really enters counts.
            let gx = Float.random(in: (strip.lowerBound - 40)...(strip.upperBound + 40), using: &random)
            let sy = Float.random(in: startY, using: &random)
            let sx: Float
            let aimX: Float
            if banked {
                sx = Float.random(in: startX, using: &random)
                aimX = nearLeft ? 2 * left - gx : 2 * right - gx
            } else {
                // From the corner's own side of the table, so the path stays off the middle.
                sx = Float.random(in: nearLeft ? 40...120 : 200...280, using: &random)
                aimX = gx
            }
            let dx = aimX - sx
            let dy = PuckConstants.height + r - sy
            let length = (dx * dx + dy * dy).squareRoot()
            let speed = Float.random(in: cornerSpeed, using: &random)
            let puck = TableSnapshot.Puck(
                x: sx, y: sy, vx: dx / length * speed, vy: dy / length * speed, angle: 0, spin: 0)
            let path = PuckPath(following: puck, defender: 0, line: PuckConstants.height, maxTicks: maxTicks)
            // Friction takes the small velocity component down faster than the large one, so a path bends toward the
            // middle: keep the shot only where it really enters the goal.
            guard path.scores, let entry = path.crossingX, strip.contains(entry),
                path.goalSpeed ?? 0 >= cornerArrival, clears(puck, of: keeperSpot), clears(puck, of: shooterSpot),
                let flight = PuckPath(following: puck, defender: 0, line: ShotReferee.defenceLine, maxTicks: maxTicks)
                    .crossingTicks, flight >= cornerFlightTicks
            else { continue }
            let shot = PuckShot(puck: puck, bounces: path.bouncesBeforeGoal)
            if path.bouncesBeforeGoal == (banked ? 1 : 0) { return shot }
            fallback = shot
        }
        if let fallback { return fallback }
        return banked ? corner(banked: false, using: &random) : PuckShot.random(bounces: 0, using: &random)
    }

    /// Whether the free path of `puck` (defender's frame) stays ``keeperClearance`` away from the paddle standing at
    /// `spot` until it reaches the goal line: the keeper's home spot, or the idle shooter's (a banked shot that
    /// grazed the shooter's paddle on its way to the wall would be deflected before the defender ever saw it).
    package static func clears(_ puck: TableSnapshot.Puck, of spot: (x: Float, y: Float)) -> Bool {
        var p = puck // the defender's frame is seat 0's, the canonical one
        for _ in 0..<maxTicks {
            let dx = p.x - spot.x
            let dy = p.y - spot.y
            if dx * dx + dy * dy < keeperClearance * keeperClearance { return false }
            if PuckMatch.advanceFreePuck(&p) != nil { return true }
        }
        return true
    }

    /// Whether any defender could have its paddle within ``reachSlack`` of where `puck`'s free path (defender's
    /// frame, as served) crosses the line y = `line`, by the tick it crosses, if that paddle — at `spot` when the shot
    /// is served, moving at the server's 40 px/tick — could act only from `delay` ticks after the serve (it moves on
    /// that tick): an estimate of the ceiling on meeting shots across a link whose round trip is about that long (the
    /// serve is seen, then the answer travels back; a jittery link can beat it by a tick or two). A shot that never
    /// crosses the line is not reachable.
    package static func reachable(
        _ puck: TableSnapshot.Puck, line: Float, from spot: (x: Float, y: Float), delay: Int
    ) -> Bool {
        let path = PuckPath(following: puck, defender: 0, line: line, maxTicks: maxTicks)
        guard let x = path.crossingX, let ticks = path.crossingTicks else { return false }
        let dx = min(max(x, 40), 280) - spot.x
        let dy = line - spot.y
        let distance = max((dx * dx + dy * dy).squareRoot() - reachSlack, 0)
        let travel = Int((distance / PuckConstants.maxPaddleStep).rounded(.up))
        return ticks >= delay - 1 + travel
    }

    /// How near the crossing counts as reaching it, px: the intercept error's target.
    package static let reachSlack: Float = 20

    /// The ticks from a serve until a defender's answer to it can act on the server, across a link with `latency`
    /// seconds one way, at the longest: the serve is in the next snapshot (snapshots go out every second tick, so up
    /// to two ticks later), that snapshot goes out, the input comes back, and it is applied on the next tick.
    package static func answerDelay(latency: Double) -> Int {
        PuckConstants.snapshotEvery + Int((2 * latency * Double(PuckConstants.tickRate)).rounded(.up)) + 1
    }
}
