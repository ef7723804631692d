import SkirmishWire

/// The per-tick physics. Only `+`, `−`, `×`, `÷` and `squareRoot()` on `Float` (all correctly rounded by
/// IEEE 754), comparisons and sign flips, so every machine computes the same bits.
extension PuckMatch {
    typealias K = PuckConstants

    /// Rounds to the nearest multiple of 2⁻¹² (ties to even) for |v| < 1024: adding 3 × 2¹¹ puts the value where
    /// the `Float` spacing is exactly 2⁻¹², and subtracting it again is exact.
    @inline(__always)
    static func quantise(_ v: Float) -> Float {
        (v + 3072) - 3072
    }

    @inline(__always)
    static func clamp(_ v: Float, _ range: ClosedRange<Float>) -> Float {
        v < range.lowerBound ? range.lowerBound : (v > range.upperBound ? range.upperBound : v)
    }

    /// A finite target in `seat`'s frame → canonical, confined to the seat's box, quantised.
    static func canonicalTarget(_ target: PuckTarget, seat: Int) -> PuckTarget {
        let x = seat == 0 ? target.x : K.width - target.x
        let y = seat == 0 ? target.y : K.height - target.y
        let box = K.paddleBox(seat: seat)
        return PuckTarget(x: quantise(clamp(x, box.x)), y: quantise(clamp(y, box.y)))
    }

    /// Moves a paddle at most `maxPaddleStep` toward its target; its velocity becomes the move (exact, since both
    /// ends are quantised).
    static func move(_ paddle: inout TableSnapshot.Paddle, toward target: PuckTarget) {
        let dx = target.x - paddle.x
        let dy = target.y - paddle.y
        let d2 = dx * dx + dy * dy
        var x = target.x
        var y = target.y
        if d2 > K.maxPaddleStep * K.maxPaddleStep {
            // One quantum short of the cap, so rounding both axes can never push the move past it.
            let scale = (K.maxPaddleStep - K.quantum) / d2.squareRoot()
            x = quantise(paddle.x + dx * scale)
            y = quantise(paddle.y + dy * scale)
        }
        paddle.vx = x - paddle.x
        paddle.vy = y - paddle.y
        paddle.x = x
        paddle.y = y
    }

    /// Whether a paddle and the puck are in contact (centres closer than `contactDistance`). This is the contact
    /// flag: a pure function of the positions, so it needs no storage and a snapshot carries it.
    @inline(__always)
    static func touching(_ paddle: TableSnapshot.Paddle, _ puck: TableSnapshot.Puck) -> Bool {
        let dx = puck.x - paddle.x
        let dy = puck.y - paddle.y
        return dx * dx + dy * dy < K.contactDistance * K.contactDistance
    }

    /// A hit: the puck leaves along the real unit normal (paddle → puck) at 1.5 × the paddle's speed, clamped.
    /// When both paddles hit in the same tick (the puck pinched between them) the two hit velocities add and the
    /// sum's speed is clamped the same way — addition commutes, so neither seat's hit wins by being second.
    static func hit(_ puck: inout TableSnapshot.Puck, paddle0: TableSnapshot.Paddle?, paddle1: TableSnapshot.Paddle?) {
        switch (paddle0, paddle1) {
        case (let p0?, nil):
            (puck.vx, puck.vy) = hitVelocity(puck, by: p0, seat: 0)
        case (nil, let p1?):
            (puck.vx, puck.vy) = hitVelocity(puck, by: p1, seat: 1)
        case (let p0?, let p1?):
            let a = hitVelocity(puck, by: p0, seat: 0)
            let b = hitVelocity(puck, by: p1, seat: 1)
            let vx = a.vx + b.vx
            let vy = a.vy + b.vy
            let speed = (vx * vx + vy * vy).squareRoot()
            // Opposite, equal hits leave the puck squeezed to a stop.
            guard speed > 0 else {
                (puck.vx, puck.vy) = (vx, vy)
                return
            }
            let scale = clamp(speed, K.hitSpeed) / speed
            (puck.vx, puck.vy) = (vx * scale, vy * scale)
        case (nil, nil):
            return
        }
    }

    static func hitVelocity(_ puck: TableSnapshot.Puck, by paddle: TableSnapshot.Paddle, seat: Int) -> (
        vx: Float, vy: Float
    ) {
        let dx = puck.x - paddle.x
        let dy = puck.y - paddle.y
        let distance = (dx * dx + dy * dy).squareRoot()
        var nx: Float = 0
        var ny: Float = seat == 0 ? -1 : 1
        if distance > 0 {
            nx = dx / distance
            ny = dy / distance
        }
        let paddleSpeed = (paddle.vx * paddle.vx + paddle.vy * paddle.vy).squareRoot()
        let speed = clamp(paddleSpeed * K.hitFactor, K.hitSpeed)
        return (nx * speed, ny * speed)
    }

    @inline(__always)
    static func decay(_ v: Float, by step: Float, above threshold: Float) -> Float {
        if v > threshold { return v - step }
        if v < -threshold { return v + step }
        return v
    }

    /// Friction, caps, spin, motion and walls; returns the scoring seat when the puck crossed an end line
    /// through the goal mouth.
    static func movePuck(_ puck: inout TableSnapshot.Puck) -> Int? {
        let r = K.puckRadius
        var vx = clamp(decay(puck.vx, by: K.friction, above: K.restSpeed), -K.maxSpeed...K.maxSpeed)
        var vy = clamp(decay(puck.vy, by: K.friction, above: K.restSpeed), -K.maxSpeed...K.maxSpeed)
        var spin = puck.spin
        if spin > K.spinDecay {
            spin = spin - K.spinDecay
        } else if spin < -K.spinDecay {
            spin = spin + K.spinDecay
        } else {
            spin = 0
        }
        var x = quantise(puck.x + vx)
        var y = quantise(puck.y + vy)
        // Side walls: reflect the position about the wall line and point the velocity back into the table.
        if x < r {
            x = (r + r) - x
            vx = vx < 0 ? -vx : vx
            spin = spin + K.wallSpin * vy
        } else if x > K.width - r {
            x = (K.width - r + (K.width - r)) - x
            vx = vx > 0 ? -vx : vx
            spin = spin - K.wallSpin * vy
        }
        var scorer: Int?
        let inMouth = x >= K.goalMouth.lowerBound && x <= K.goalMouth.upperBound
        if y < r {
            if !inMouth {
                y = (r + r) - y
                vy = vy < 0 ? -vy : vy
                spin = spin - K.wallSpin * vx
            } else if y < 0 {
                scorer = 0
            }
        } else if y > K.height - r {
            if !inMouth {
                y = (K.height - r + (K.height - r)) - y
                vy = vy > 0 ? -vy : vy
                spin = spin + K.wallSpin * vx
            } else if y > K.height {
                scorer = 1
            }
        }
        spin = clamp(spin, -K.maxSpin...K.maxSpin)
        var angle = puck.angle + spin
        if angle > Float.pi {
            angle = angle - 2 * Float.pi
        } else if angle < -Float.pi {
            angle = angle + 2 * Float.pi
        }
        puck = TableSnapshot.Puck(x: x, y: y, vx: vx, vy: vy, angle: angle, spin: spin)
        return scorer
    }
}
