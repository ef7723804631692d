import SkirmishWire

/// A seeded shot on goal and the free path of a puck: package-only tools for the reference server's shot machine,
/// the AI evaluation and tests. No rule of the game lives here.
///
/// Shots are described in the *defender's* frame (the defender at the bottom, its goal at y = 480), so the same shot
/// can be served at either seat.
package struct PuckShot: Sendable, Hashable {
    /// The puck as served, in the defender's frame, at rest spin.
    package var puck: TableSnapshot.Puck
    /// Side-wall bounces the free puck makes before it crosses the defender's end line.
    package var bounces: Int

    package init(puck: TableSnapshot.Puck, bounces: Int) {
        self.puck = puck
        self.bounces = bounces
    }

    /// The served puck in the canonical frame, for a defender in `seat`.
    package func canonical(defender seat: Int) -> TableSnapshot.Puck { PuckMatch.view(puck, seat: seat) }

    /// Where shots start (defender's frame: the shooter's half) and how fast, in px per tick (a hit's range tops out
    /// at 15).
    package static let startX: ClosedRange<Float> = 40...280
    package static let startY: ClosedRange<Float> = 40...200
    package static let speed: ClosedRange<Float> = 7...15
    /// Most free ticks a shot may take to reach the goal.
    package static let maxTicks = 300

    /// A random shot that scores on an empty goal with exactly `bounces` side-wall bounces (2 means two or more),
    /// drawn by rejection: aim at a point in the goal mouth, or at its mirror image across one or both side walls,
    /// then keep the shot only if the shared physics takes it there. At most 2,000 draws; after that the last shot
    /// that scores at all is returned (with its real bounce count).
    package static func random(bounces: Int, using random: inout SeededRandom) -> PuckShot {
        let r = PuckConstants.puckRadius
        let left = r
        let right = PuckConstants.width - r
        var fallback: PuckShot?
        for _ in 0..<2_000 {
            let sx = Float.random(in: startX, using: &random)
            let sy = Float.random(in: startY, using: &random)
            let gx = Float.random(
                in: (PuckConstants.goalMouth.lowerBound + 8)...(PuckConstants.goalMouth.upperBound - 8),
                using: &random)
            let aimX: Float
            switch bounces {
            case 0: aimX = gx
            case 1: aimX = Bool.random(using: &random) ? 2 * left - gx : 2 * right - gx
            default: aimX = Bool.random(using: &random) ? gx + 2 * (right - left) : gx - 2 * (right - left)
            }
            let dx = aimX - sx
            let dy = PuckConstants.height + r - sy
            let length = (dx * dx + dy * dy).squareRoot()
            let speed = Float.random(in: Self.speed, using: &random)
            let puck = TableSnapshot.Puck(
                x: sx, y: sy, vx: dx / length * speed, vy: dy / length * speed, angle: 0, spin: 0)
            let path = PuckPath(following: puck, defender: 0, line: PuckConstants.height, maxTicks: maxTicks)
            guard path.scores else { continue }
            let shot = PuckShot(puck: puck, bounces: path.bouncesBeforeGoal)
            if bounces >= 2 ? path.bouncesBeforeGoal >= 2 : path.bouncesBeforeGoal == bounces { return shot }
            fallback = shot
        }
        return fallback
            ?? PuckShot(puck: TableSnapshot.Puck(x: 160, y: 120, vx: 0, vy: 12, angle: 0, spin: 0), bounces: 0)
    }
}

/// What a puck does if no paddle touches it, followed with the shared physics in the canonical frame.
package struct PuckPath: Sendable, Hashable {
    /// Where the puck's centre first reaches the line while moving toward the defender's goal (defender's frame).
    package var crossingX: Float?
    /// Ticks from the start to that crossing.
    package var crossingTicks: Int?
    /// Side-wall bounces before the crossing (or before the end of the path when there is none).
    package var bouncesBeforeCrossing: Int
    /// Whether the puck goes into the defender's goal.
    package var scores: Bool
    /// Side-wall bounces before it does (or in the whole path).
    package var bouncesBeforeGoal: Int
    /// Ticks until the goal, when it scores.
    package var goalTicks: Int?
    /// The puck's speed, px per tick, on the tick it enters a goal.
    package var goalSpeed: Float?

    /// Follows `puck` (given in the frame of seat `defender`, which defends the bottom goal of that frame) for at
    /// most `maxTicks` ticks, stopping at a goal at either end.
    package init(following puck: TableSnapshot.Puck, defender: Int, line: Float, maxTicks: Int) {
        self.init(
            followingCanonical: PuckMatch.view(puck, seat: defender), defender: defender, line: line,
            maxTicks: maxTicks)
    }

    /// The same, for a puck given in the canonical frame (as a server or a replica holds it).
    package init(followingCanonical puck: TableSnapshot.Puck, defender: Int, line: Float, maxTicks: Int) {
        var p = puck
        var bounces = 0
        crossingX = nil
        crossingTicks = nil
        bouncesBeforeCrossing = 0
        scores = false
        goalTicks = nil
        goalSpeed = nil
        for tick in 1...max(maxTicks, 1) {
            let vxBefore = p.vx
            let scorer = PuckMatch.advanceFreePuck(&p)
            if vxBefore != 0, (vxBefore < 0) != (p.vx < 0) { bounces += 1 }
            let own = PuckMatch.view(p, seat: defender)
            if crossingX == nil, own.y >= line, own.vy > 0 {
                crossingX = own.x
                crossingTicks = tick
                bouncesBeforeCrossing = bounces
            }
            if let scorer {
                scores = scorer != defender
                goalTicks = tick
                goalSpeed = (p.vx * p.vx + p.vy * p.vy).squareRoot()
                break
            }
        }
        if crossingX == nil { bouncesBeforeCrossing = bounces }
        bouncesBeforeGoal = bounces
    }
}
