import SkirmishGames
import SkirmishWire

/// A baseline Puck player ported from the Robot Air Hockey Challenge's published baseline agent
/// (`AirHockeyChallenge/air_hockey_challenge`, `baseline/baseline_agent/kalman_filter.py` and `tactics.py`): the
/// field's reference point that `skirmish ai-eval` measures the ``Opponent`` against.
///
/// What is ported, in this table's units (px, 60 Hz ticks) and the player's own frame (its goal at y = 480):
///
/// - **Puck tracker**: a Kalman filter on the puck *position only* (the baseline observes x, y and yaw, never the
///   velocity), one independent position–velocity filter per axis (the baseline's noise matrices are diagonal, so
///   its covariance separates the same way). The baseline's motion model is constant velocity with linear damping
///   fitted to its table; here it is fitted to this one, whose friction takes 0.1 px/tick off each axis per tick
///   above 0.3 px/tick (an extended Kalman filter: the Jacobian is the constant-velocity one). Snapshots are stepped
///   in by their server tick. A jump of more than 60 px (a serve, a goal's reset) restarts the axis at rest.
/// - **Wall-bounce model**: a prediction that crosses a side wall, or an end wall outside the goal mouth, is reflected
///   there (the baseline's rim collision, with restitution 1 since this table's walls keep the speed).
/// - **1 s prediction horizon**: from the filtered state, the puck is rolled forward for the time the newest
///   snapshot is behind the server plus what an input takes to get there (one round trip), then up to 60 more ticks,
///   looking for where it crosses the defence line toward the goal.
/// - **Tactics**: *defend* — go to that crossing on the defence line (y = 400); *hit* — a slow puck in its half is
///   struck toward the far goal from behind; otherwise *home* — stand before the goal, shading toward the puck.
///
/// It never reads a clock: every call takes the time, like the ``Opponent``. What it does not port: the 7-DoF arm
/// (its kinematics, the Bézier and cubic trajectory planners and their optimiser) — the server moves the paddle at
/// up to 40 px per tick toward the commanded point, the same cap the expert ``Opponent`` has.
package struct KalmanGoalie: PuckAgent {
    /// One axis of the tracker: position and velocity (px, px per tick) and their covariance.
    struct Axis: Sendable {
        var position: Float
        var velocity: Float = 0
        var pp: Float
        var pv: Float = 0
        var vv: Float

        init(at position: Float) {
            self.position = position
            pp = KalmanGoalie.measurementNoise
            vv = 100
        }

        /// One tick of the motion model: friction, then motion, as the table does it.
        mutating func predict() {
            let friction = PuckConstants.friction
            if velocity > PuckConstants.restSpeed {
                velocity -= friction
            } else if velocity < -PuckConstants.restSpeed {
                velocity += friction
            }
            position += velocity
            // P ← F P Fᵀ + Q with the Jacobian F = [[1, 1], [0, 1]].
            let npp = pp + 2 * pv + vv + KalmanGoalie.positionNoise
            let npv = pv + vv
            let nvv = vv + KalmanGoalie.velocityNoise
            (pp, pv, vv) = (npp, npv, nvv)
        }

        /// A bounce off a wall at `wall`: the position reflected, the velocity reversed (F = [[−1, 0], [0, −1]]
        /// about the wall leaves the covariance as it is).
        mutating func reflect(about wall: Float) {
            position = 2 * wall - position
            velocity = -velocity
        }

        /// The measurement `z` of the position.
        mutating func update(_ z: Float) {
            let s = pp + KalmanGoalie.measurementNoise
            let kp = pp / s
            let kv = pv / s
            let innovation = z - position
            position += kp * innovation
            velocity += kv * innovation
            (pp, pv, vv) = ((1 - kp) * pp, (1 - kp) * pv, vv - kv * pv)
        }
    }

    /// The defence line, own frame: the puck-centre y the goalie meets the puck on.
    package static let defenceLine: Float = 400
    /// The prediction horizon beyond the present, in ticks (1 s).
    package static let horizonTicks = 60
    /// Where it stands with nothing to do, own frame.
    package static let home: (x: Float, y: Float) = (160, 425)
    static let positionNoise: Float = 0.01
    static let velocityNoise: Float = 0.05
    static let measurementNoise: Float = 0.05

    /// The seat it plays.
    package let seat: Int
    private var axes: (x: Axis, y: Axis)?
    private var filterTick: UInt32 = 0
    private var latest: TableSnapshot?
    private var arrival = 0.0
    private var roundTrip = 0.0
    private var inputStep: UInt32 = 0

    /// A goalie for `seat`.
    package init(seat: Int) {
        self.seat = seat
    }

    /// Steps the filter to the snapshot's tick and corrects it with the snapshot's puck position.
    package mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {
        if let latest, !SerialNumber.follows(snapshot.tick, latest.tick) { return }
        latest = snapshot
        arrival = time.seconds
        let z = snapshot.puck
        guard var axes, snapshot.phase == .playing else {
            self.axes = (Axis(at: z.x), Axis(at: z.y))
            filterTick = snapshot.tick
            return
        }
        let gap = min(Int(snapshot.tick &- filterTick), 30)
        for _ in 0..<gap { Self.advance(&axes) }
        filterTick = snapshot.tick
        if abs(z.x - axes.x.position) > 60 || abs(z.y - axes.y.position) > 60 {
            axes = (Axis(at: z.x), Axis(at: z.y))
        } else {
            axes.x.update(z.x)
            axes.y.update(z.y)
        }
        self.axes = axes
    }

    /// Keeps the newest round trip: predictions cover it.
    package mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {
        self.roundTrip = roundTrip.seconds
    }

    /// The point to go to now: defend, hit or home.
    package mutating func act(now: Instant) -> PaddleState? {
        inputStep &+= 1
        let target = decide(now: now.seconds)
        return PaddleState(inputStep: inputStep, x: target.x, y: target.y, vx: 0, vy: 0)
    }

    private func decide(now: Double) -> (x: Float, y: Float) {
        guard let latest, latest.phase == .playing, var puck = axes else { return Self.home }
        let lead = Int(((now - arrival + roundTrip) * Double(PuckConstants.tickRate)).rounded())
        let lag = min(max(lead, 0), 60)
        for _ in 0..<lag { Self.advance(&puck) }
        let present = (x: puck.x.position, y: puck.y.position)
        let speed2 = puck.x.velocity * puck.x.velocity + puck.y.velocity * puck.y.velocity
        if speed2 < 9, present.y >= 250, present.y <= 445 {
            // Hit: from behind (nearer its own goal), drive through toward the far goal.
            if latest.me.y > present.y + 20 {
                return Self.confined(x: present.x, y: present.y - 40)
            }
            return Self.confined(x: present.x + (present.x < 160 ? 30 : -30), y: present.y + 70)
        }
        if puck.y.velocity > 0 {
            if present.y >= Self.defenceLine { return Self.confined(x: present.x, y: 430) }
            for _ in 0..<Self.horizonTicks {
                Self.advance(&puck)
                if puck.y.position >= Self.defenceLine { return Self.confined(x: puck.x.position, y: Self.defenceLine) }
            }
        }
        return (Self.home.x + (present.x - 160) / 4, Self.home.y)
    }

    /// One tick of the tracker's model, walls included.
    private static func advance(_ axes: inout (x: Axis, y: Axis)) {
        let r = PuckConstants.puckRadius
        axes.x.predict()
        axes.y.predict()
        if axes.x.position < r {
            axes.x.reflect(about: r)
        } else if axes.x.position > PuckConstants.width - r {
            axes.x.reflect(about: PuckConstants.width - r)
        }
        let inMouth = PuckConstants.goalMouth.contains(axes.x.position)
        if !inMouth, axes.y.position < r {
            axes.y.reflect(about: r)
        } else if !inMouth, axes.y.position > PuckConstants.height - r {
            axes.y.reflect(about: PuckConstants.height - r)
        }
    }

    private static func confined(x: Float, y: Float) -> (x: Float, y: Float) {
        let r = PuckConstants.paddleRadius
        return (min(max(x, r), PuckConstants.width - r), min(max(y, 280), PuckConstants.height - r))
    }
}
