import SkirmishGames
import SkirmishWire

/// A person playing Puck with a mouse, as a model: what they see comes late, where they aim is not quite where their
/// hand lands, and their hand speeds up and slows down instead of jumping.
///
/// - **Perception**: the player acts on the newest snapshot that reached them at least their reaction delay ago
///   (drawn once per player, seeded, from their level's range within 150–250 ms), and makes up part of that delay by
///   carrying the puck along its path (``Parameters/anticipation``; walls reflect it).
/// - **Intent**: a puck in their half is struck from behind toward the far goal; a puck coming at their goal is
///   blocked where they expect it to cross their line; otherwise they stand before their goal, shading toward it.
/// - **Aim**: every submovement (``Parameters/submovement``) the point the hand goes for is re-drawn around the
///   intended one with a normal error of ``Parameters/aimNoise`` px.
/// - **Hand**: the commanded point moves with at most ``Parameters/acceleration`` px/tick² and
///   ``Parameters/maxSpeed`` px/tick, braking in time to stop on its aim point.
///
/// The article *A human-like player* (SkirmishOpponent) gives each level's numbers and where they come from. It never
/// reads a clock: every call takes the time, so the lock-step table, `skirmish ai-eval` and a swarm bot drive it
/// alike.
package struct HumanPlayer: PuckAgent {
    /// How well the modelled person plays.
    package enum Skill: String, Sendable, Hashable, CaseIterable {
        /// Someone new to the game: slow to react, imprecise, a slow hand.
        case beginner
        /// Someone who plays now and then.
        case casual
        /// A practised player: quick, precise and fast.
        case skilled
    }

    /// The numbers of a level.
    package struct Parameters: Sendable, Hashable {
        /// The range a player's reaction delay is drawn from, once per player, seconds.
        package var reaction: ClosedRange<Double>
        /// How much of its reaction delay the player makes up by carrying the puck along its path (0: none, 1: all).
        package var anticipation: Double
        /// The standard deviation of where the hand lands around the intended point, px.
        package var aimNoise: Float
        /// How often a new submovement (a new aim point with its own error) starts, seconds.
        package var submovement: Double
        /// The hand's top speed, px per tick.
        package var maxSpeed: Float
        /// The hand's largest change of velocity, px per tick per tick.
        package var acceleration: Float
    }

    /// The numbers of `skill` (see the article for their sources).
    package static func parameters(_ skill: Skill) -> Parameters {
        switch skill {
        case .beginner:
            Parameters(
                reaction: 0.22...0.25, anticipation: 0, aimNoise: 14, submovement: 0.25, maxSpeed: 8,
                acceleration: 1.0)
        case .casual:
            Parameters(
                reaction: 0.18...0.22, anticipation: 0.5, aimNoise: 8, submovement: 0.2, maxSpeed: 10,
                acceleration: 1.4)
        case .skilled:
            Parameters(
                reaction: 0.15...0.18, anticipation: 0.9, aimNoise: 4, submovement: 0.15, maxSpeed: 14,
                acceleration: 2.2)
        }
    }

    package let skill: Skill
    package let parameters: Parameters
    /// This player's reaction delay, seconds: drawn once from the level's range.
    package let reaction: Double
    private var random: SeededRandom
    /// Snapshots as they reached the player, newest last; those older than the one the player now sees are dropped.
    private var seen: [(time: Double, snapshot: TableSnapshot)] = []
    private var hand = (x: Float(160), y: Float(430))
    private var velocity = (x: Float(0), y: Float(0))
    private var error = (x: Float(0), y: Float(0))
    private var nextSubmovement = -Double.infinity
    private var lastAct: Double?
    private var inputStep: UInt32 = 0

    /// A player of `skill` whose reaction delay and aim errors follow from `seed`.
    package init(skill: Skill, seed: UInt64) {
        self.skill = skill
        parameters = Self.parameters(skill)
        random = SeededRandom(seed: seed)
        reaction = Double.random(in: parameters.reaction, using: &random)
    }

    /// Where the hand (the commanded point) is now.
    package var handPosition: (x: Float, y: Float) { hand }

    package mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {
        seen.append((time.seconds, snapshot))
        // Bounded: a second of snapshots is far more than any reaction delay needs.
        if seen.count > 64 { seen.removeFirst(seen.count - 64) }
    }

    /// A person does not time the server: the round trip changes nothing they do.
    package mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {}

    package mutating func act(now: Instant) -> PaddleState? {
        let t = now.seconds
        let ticks = Float(min(max((t - (lastAct ?? t)) * Double(PuckConstants.tickRate), 0), 4))
        lastAct = t
        var target = intent(at: t)
        if t >= nextSubmovement {
            nextSubmovement = t + parameters.submovement
            error = (gaussian() * parameters.aimNoise, gaussian() * parameters.aimNoise)
        }
        target = Self.confined(x: target.x + error.x, y: target.y + error.y)
        move(toward: target, ticks: max(ticks, 1))
        inputStep &+= 1
        return PaddleState(inputStep: inputStep, x: hand.x, y: hand.y, vx: 0, vy: 0)
    }

    /// Where the player means to put the paddle, from the table as they see it at `t`.
    private func intent(at t: Double) -> (x: Float, y: Float) {
        // The newest snapshot that reached the player at least their reaction delay ago.
        guard let (time, snapshot) = seen.last(where: { $0.time <= t - reaction }), snapshot.phase == .playing else {
            return Self.home
        }
        // Carried along its path for the part of the delay the player makes up.
        let lead = Float((t - time) * parameters.anticipation * Double(PuckConstants.tickRate))
        let puck = Self.carried(snapshot.puck, ticks: lead)
        let speed = (puck.vx * puck.vx + puck.vy * puck.vy).squareRoot()
        if puck.y >= PuckConstants.centre.y, speed < 6 || puck.vy < 0 {
            // In their half and not flying at them: strike it toward the far goal, from behind.
            if hand.y > puck.y + 25 {
                let dx = PuckConstants.centre.x - puck.x
                let dy = -puck.y
                let length = max((dx * dx + dy * dy).squareRoot(), 1)
                return Self.confined(x: puck.x + dx / length * 20, y: puck.y + dy / length * 20)
            }
            return Self.confined(x: puck.x + (puck.x < PuckConstants.centre.x ? 25 : -25), y: puck.y + 60)
        }
        if puck.vy > 0 {
            // Coming at their goal: where it will cross their line, as far as they can tell.
            let ticksToLine = max((Self.line - puck.y) / max(puck.vy, 0.5), 0)
            let crossing = Self.carried(puck, ticks: min(ticksToLine, 90) * Float(parameters.anticipation))
            return Self.confined(x: crossing.x, y: Self.line)
        }
        return (Self.home.x + (puck.x - Self.home.x) * 0.5, Self.home.y)
    }

    /// The hand moves toward `target`: no faster than its top speed, no quicker to change than its acceleration, and
    /// slowing so that it can stop where it aims.
    private mutating func move(toward target: (x: Float, y: Float), ticks: Float) {
        let dx = target.x - hand.x
        let dy = target.y - hand.y
        let distance = (dx * dx + dy * dy).squareRoot()
        let cruise = min(parameters.maxSpeed, (2 * parameters.acceleration * distance).squareRoot())
        let want = distance > 0.01 ? (x: dx / distance * cruise, y: dy / distance * cruise) : (x: Float(0), y: Float(0))
        var change = (x: want.x - velocity.x, y: want.y - velocity.y)
        let size = (change.x * change.x + change.y * change.y).squareRoot()
        let allowed = parameters.acceleration * ticks
        if size > allowed { change = (change.x / size * allowed, change.y / size * allowed) }
        velocity = (velocity.x + change.x, velocity.y + change.y)
        let step = (x: velocity.x * ticks, y: velocity.y * ticks)
        let stepLength = (step.x * step.x + step.y * step.y).squareRoot()
        // Never past the aim point: a hand that arrives stops there.
        if stepLength >= distance {
            hand = target
            velocity = (0, 0)
        } else {
            let moved = Self.confined(x: hand.x + step.x, y: hand.y + step.y)
            // A hand against the edge of the half stops there: it keeps only the speed it actually has.
            velocity = ((moved.x - hand.x) / ticks, (moved.y - hand.y) / ticks)
            hand = moved
        }
    }

    /// A normal draw (Box–Muller) from this player's generator.
    private mutating func gaussian() -> Float {
        let u = Double.random(in: Double.ulpOfOne...1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return Float((-2 * log(u)).squareRoot() * cos(2 * Double.pi * v))
    }

    /// The puck `ticks` later on a straight path, reflected by the side walls (friction and paddles left out).
    static func carried(_ puck: TableSnapshot.Puck, ticks: Float) -> TableSnapshot.Puck {
        var moved = puck
        let r = PuckConstants.puckRadius
        let (left, right) = (r, PuckConstants.width - r)
        var x = puck.x + puck.vx * ticks
        var vx = puck.vx
        // Fold the path back into the table, wall by wall.
        for _ in 0..<8 where x < left || x > right {
            if x < left {
                x = 2 * left - x
            } else {
                x = 2 * right - x
            }
            vx = -vx
        }
        moved.x = min(max(x, left), right)
        moved.vx = vx
        moved.y = min(max(puck.y + puck.vy * ticks, r), PuckConstants.height - r)
        return moved
    }

    /// Where a player waits: before their goal.
    static let home = (x: Float(160), y: Float(430))
    /// The line they block on.
    static let line: Float = 420

    /// A point of the player's half that the paddle can reach.
    static func confined(x: Float, y: Float) -> (x: Float, y: Float) {
        (min(max(x, 40), 280), min(max(y, 280), 440))
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
