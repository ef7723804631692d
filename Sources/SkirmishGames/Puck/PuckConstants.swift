import SkirmishWire

/// The numbers of the Puck table and its physics (DESIGN §3), in pixels and 60 Hz ticks.
///
/// The canonical frame has seat 0 at the bottom (large y) and seat 1 at the top; y grows downwards.
public enum PuckConstants {
    /// Table width, in pixels.
    public static let width: Float = 320
    /// Table length, in pixels; each seat owns half.
    public static let height: Float = 480
    /// Puck radius, in pixels.
    public static let puckRadius: Float = 20
    /// Paddle radius, in pixels.
    public static let paddleRadius: Float = 40
    /// The goal mouth at both ends: the puck's centre must be inside it to cross an end line.
    public static let goalMouth: ClosedRange<Float> = 80...240
    /// Simulation ticks per second; every per-tick figure here is per 1/60 s.
    public static let tickRate = 60
    /// The server sends a `TableSnapshot` every this many ticks (30 Hz), and also on any tick with a goal or the
    /// end of the match, so a phase change on an odd tick still reaches the clients.
    public static let snapshotEvery = 2
    /// Goals that win a match.
    public static let winningScore: UInt8 = 7
    /// A paddle moves at most this far (Euclidean) per tick toward its target.
    public static let maxPaddleStep: Float = 40
    /// Ticks of the kick-off pause (three seconds) at the start of a match and after every goal that does not end
    /// it: the puck rests at the centre, paddles move, and clients count down 3-2-1 from the puck's `angle`.
    public static let goalPauseTicks = 180
    /// Paddle–puck contact when their centres are closer than this (`puckRadius + paddleRadius`).
    public static let contactDistance: Float = 60
    /// A hit sets the puck's speed to the paddle's speed times this…
    public static let hitFactor: Float = 1.5
    /// …clamped to this range.
    public static let hitSpeed: ClosedRange<Float> = 2.5...15
    /// Friction: each velocity axis moves this much toward 0 per tick…
    public static let friction: Float = 0.1
    /// …while its magnitude is above this.
    public static let restSpeed: Float = 0.3
    /// Each velocity axis is clamped to ±this.
    public static let maxSpeed: Float = 40
    /// Spin moves this much toward 0 per tick.
    public static let spinDecay: Float = 0.05
    /// A wall bounce adds this times the velocity component along the wall to the spin.
    public static let wallSpin: Float = 0.005
    /// Spin is clamped to ±this (radians per tick).
    public static let maxSpin: Float = 1
    /// Positions are multiples of this after every step, so `width − x` and `height − y` are exact in `Float`.
    public static let quantum: Float = 1.0 / 4096
    /// The box a seat's paddle centre is confined to, in the canonical frame: its own half and the table.
    public static func paddleBox(seat: Int) -> (x: ClosedRange<Float>, y: ClosedRange<Float>) {
        let x: ClosedRange<Float> = paddleRadius...(width - paddleRadius)
        return seat == 0 ? (x, 280...(height - paddleRadius)) : (x, paddleRadius...200)
    }
    /// Where each seat's paddle starts, in the canonical frame.
    public static func startSpot(seat: Int) -> (x: Float, y: Float) {
        seat == 0 ? (160, 400) : (160, 80)
    }
    /// Where the puck starts and restarts after a goal.
    public static let centre: (x: Float, y: Float) = (160, 240)
}
