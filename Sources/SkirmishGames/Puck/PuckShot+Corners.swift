import SkirmishWire

extension PuckShot {
    /// Where a corner shot ends, in the defender's frame: the outer 16 px of the goal mouth, left and right — outside
    /// the 60 px a paddle at the goal's middle reaches.
    package static let cornerStrips: [ClosedRange<Float>] = [81...96, 224...239]
    /// How fast corner shots are, px per tick: from the top of a hit's range (15) up to a third faster, so that banked
    /// shots can cross the table twice before the defender's half, the way a hard shot does, against this table's
    /// friction.
    package static let cornerSpeed: ClosedRange<Float> = 12...20
    /// Where the shooter's idle paddle stands, in the defender's frame; shots start clear of it.
    package static let shooterSpot: (x: Float, y: Float) = (160, 80)

    /// A seeded shot the way a player beats a goalkeeper: fast, aimed at a corner of the goal, and arriving from that
    /// corner's side — straight from that side of the table, or banked so its last side-wall bounce is off the near
    /// wall — with exactly `bounces` side-wall bounces (2 or more asks for exactly 2).
    ///
    /// `skirmish ai-eval` serves these: a paddle that stands still at the AI's home spot, (160, 425), saves at most
    /// 15 % of them (a test simulates it with the real physics), so a save rate measures moving to the puck, not
    /// standing in the middle. Drawn by rejection like ``random(bounces:using:)``: the shared physics must take the
    /// shot into an empty goal through the corner strip, with the bounce count asked for; at most 2,000 draws (8,000
    /// for two bounces), then the last such shot with another bounce count, or else ``random(bounces:using:)``.
    package static func corner(bounces: Int, using random: inout SeededRandom) -> PuckShot {
        let r = PuckConstants.puckRadius
        let left = r
        let right = PuckConstants.width - r
        let span = right - left
        var fallback: PuckShot?
        // Two-bounce corner shots are rare draws (about one in 2,000): they get more tries.
        for _ in 0..<(bounces >= 2 ? 8_000 : 2_000) {
            let nearLeft = Bool.random(using: &random)
            let strip = cornerStrips[nearLeft ? 0 : 1]
            // Aimed around the strip: friction bends the path, and only where it really enters counts.
            let gx = Float.random(in: (strip.lowerBound - 40)...(strip.upperBound + 40), using: &random)
            let sy = Float.random(in: startY, using: &random)
            let sx: Float
            let aimX: Float
            switch bounces {
            case 0:
                // From the corner's own side of the table, so the path stays off the middle.
                sx = Float.random(in: nearLeft ? 40...120 : 200...280, using: &random)
                aimX = gx
            case 1:
                // Banked off the near wall.
                sx = Float.random(in: startX, using: &random)
                aimX = nearLeft ? 2 * left - gx : 2 * right - gx
            default:
                // Off the far wall, then the near one, starting on the far side so the path crosses the table
                // before it reaches the defender's half.
                sx = Float.random(in: nearLeft ? 180...280 : 40...140, using: &random)
                aimX = nearLeft ? gx + 2 * span : gx - 2 * span
            }
            let sdx = sx - shooterSpot.x
            let sdy = sy - shooterSpot.y
            guard sdx * sdx + sdy * sdy > 70 * 70 else { continue }
            let dx = aimX - sx
            let dy = PuckConstants.height + r - sy
            let length = (dx * dx + dy * dy).squareRoot()
            let speed = Float.random(in: cornerSpeed, using: &random)
            let puck = TableSnapshot.Puck(
                x: sx, y: sy, vx: dx / length * speed, vy: dy / length * speed, angle: 0, spin: 0)
            let path = PuckPath(following: puck, defender: 0, line: PuckConstants.height, maxTicks: maxTicks)
            // Friction takes the small velocity component down faster than the large one, so a path bends toward the
            // middle: keep the shot only where it really enters the goal.
            guard path.scores, let entry = path.crossingX, strip.contains(entry) else { continue }
            let shot = PuckShot(puck: puck, bounces: path.bouncesBeforeGoal)
            if path.bouncesBeforeGoal == min(bounces, 2) { return shot }
            fallback = shot
        }
        return fallback ?? PuckShot.random(bounces: bounces, using: &random)
    }
}
