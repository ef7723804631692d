import SkirmishWire

/// The authoritative state of one Puck match, in the canonical frame (seat 0 at the bottom).
///
/// A value-type state machine: the server calls ``step(targets:)`` 60 times a second with each seat's latest
/// target and sends ``snapshot(for:lastInputStep:)`` to each seat every other tick. Nothing here reads a clock or
/// does IO, so a replica built from an exact snapshot with ``init(snapshot:seat:)`` and stepped with the same
/// targets reproduces the server bit for bit. See the "Puck physics" section of the module documentation.
public struct PuckMatch: Sendable, Hashable {
    /// Ticks stepped while playing or in a goal pause.
    public internal(set) var tick: UInt32
    /// Waiting for the second seat, playing, paused for a kick-off (at the start and after a goal), or over.
    public internal(set) var phase: PuckPhase
    /// Seat 0's goals.
    public internal(set) var score0: UInt8
    /// Seat 1's goals.
    public internal(set) var score1: UInt8
    /// Seat 0's paddle (position and the velocity derived from its last move).
    public internal(set) var paddle0: TableSnapshot.Paddle
    /// Seat 1's paddle.
    public internal(set) var paddle1: TableSnapshot.Paddle
    /// The puck. During a kick-off pause it rests at the centre and its `angle` counts the pause ticks left (whole
    /// numbers), so a snapshot carries the whole state and a replica knows when play resumes.
    public internal(set) var puck: TableSnapshot.Puck
    /// The winner once the phase is `.over` (by score or forfeit); `nil` before, or when unknown to a replica.
    public internal(set) var winner: Int?
    /// Each seat's latest accepted target, canonical, clamped and quantised. Inputs, not state: not hashed.
    var target0: PuckTarget
    var target1: PuckTarget

    /// A match waiting for players: puck at the centre at rest, paddles at their start spots.
    public init() {
        tick = 0
        phase = .waiting
        score0 = 0
        score1 = 0
        let s0 = PuckConstants.startSpot(seat: 0)
        let s1 = PuckConstants.startSpot(seat: 1)
        paddle0 = TableSnapshot.Paddle(x: s0.x, y: s0.y, vx: 0, vy: 0)
        paddle1 = TableSnapshot.Paddle(x: s1.x, y: s1.y, vx: 0, vy: 0)
        puck = Self.restingPuck(angle: 0)
        winner = nil
        target0 = PuckTarget(x: s0.x, y: s0.y)
        target1 = PuckTarget(x: s1.x, y: s1.y)
    }

    /// Both scores, seat 0 first.
    public var scores: (UInt8, UInt8) { (score0, score1) }

    /// Seat `seat`'s score.
    public func score(of seat: Int) -> UInt8 { seat == 0 ? score0 : score1 }

    /// Seat `seat`'s paddle.
    public func paddle(of seat: Int) -> TableSnapshot.Paddle { seat == 0 ? paddle0 : paddle1 }

    /// Starts the match once both seats are filled, with a kick-off: a pause of ``PuckConstants/goalPauseTicks``
    /// (the puck at rest at the centre, its `angle` counting down) before the puck can be hit. Does nothing unless
    /// the match is waiting.
    public mutating func start() {
        guard phase == .waiting else { return }
        phase = .goalPause
        puck = Self.restingPuck(angle: Float(PuckConstants.goalPauseTicks))
    }

    /// Ends the match: the other seat wins with the scores as they are. Does nothing once the match is over.
    public mutating func forfeit(loser seat: Int) -> PuckEvents {
        guard phase != .over else { return PuckEvents() }
        phase = .over
        winner = seat == 0 ? 1 : 0
        puck = Self.restingPuck(angle: 0)
        return PuckEvents(winner: winner)
    }

    /// Applies each seat's latest target (`nil` keeps the previous one), then advances one 60 Hz tick.
    ///
    /// `targets[s]` is in seat `s`'s own frame; the mirroring for seat 1 is done here. A non-finite target is
    /// refused (reported in ``PuckEvents/refusedTargets``) and the previous target kept. Missing entries are `nil`.
    public mutating func step(targets: [PuckTarget?]) -> PuckEvents {
        step(targets.count > 0 ? targets[0] : nil, targets.count > 1 ? targets[1] : nil)
    }

    /// ``step(targets:)`` without the array: seat 0's target, then seat 1's.
    public mutating func step(_ t0: PuckTarget?, _ t1: PuckTarget?) -> PuckEvents {
        var events = PuckEvents()
        if let t0 {
            if t0.isFinite { target0 = Self.canonicalTarget(t0, seat: 0) } else { events.refusedTargets |= 1 }
        }
        if let t1 {
            if t1.isFinite { target1 = Self.canonicalTarget(t1, seat: 1) } else { events.refusedTargets |= 2 }
        }
        switch phase {
        case .waiting, .over:
            return events
        case .goalPause:
            movePaddles()
            tick &+= 1
            puck.angle = puck.angle - 1
            if !(puck.angle > 0) {
                puck.angle = 0
                phase = .playing
            }
        case .playing:
            let wasTouching0 = Self.touching(paddle0, puck)
            let wasTouching1 = Self.touching(paddle1, puck)
            movePaddles()
            tick &+= 1
            if let scorer = Self.movePuck(&puck) {
                events.goal = scored(by: scorer)
                events.winner = winner
            } else {
                // Contact is judged on the positions after the step, so a puck running into a still paddle is hit
                // as well as a paddle striking a still puck; the new velocity moves the puck from the next tick.
                let hit0 = !wasTouching0 && Self.touching(paddle0, puck)
                let hit1 = !wasTouching1 && Self.touching(paddle1, puck)
                if hit0 || hit1 { Self.hit(&puck, paddle0: hit0 ? paddle0 : nil, paddle1: hit1 ? paddle1 : nil) }
                events.hits = (hit0 ? 1 : 0) | (hit1 ? 2 : 0)
            }
        }
        return events
    }

    private mutating func scored(by scorer: Int) -> PuckEvents.Goal {
        if scorer == 0 { score0 &+= 1 } else { score1 &+= 1 }
        if score(of: scorer) >= PuckConstants.winningScore {
            phase = .over
            winner = scorer
            puck = Self.restingPuck(angle: 0)
        } else {
            phase = .goalPause
            puck = Self.restingPuck(angle: Float(PuckConstants.goalPauseTicks))
        }
        return PuckEvents.Goal(scorer: scorer, score0: score0, score1: score1, tick: tick)
    }

    private mutating func movePaddles() {
        Self.move(&paddle0, toward: target0)
        Self.move(&paddle1, toward: target1)
    }

    static func restingPuck(angle: Float) -> TableSnapshot.Puck {
        TableSnapshot.Puck(x: PuckConstants.centre.x, y: PuckConstants.centre.y, vx: 0, vy: 0, angle: angle, spin: 0)
    }
}
