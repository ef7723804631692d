import SkirmishGames
import SkirmishOpponent
import SkirmishWire

/// Who stands in goal in a shot session: the AI under test, or one of the baselines it is compared with on the
/// same shots.
package enum ShotDefender: Sendable, Hashable {
    /// An ``SkirmishOpponent/Opponent`` with this configuration (prediction off is the no-prediction baseline).
    case ai(OpponentConfiguration)
    /// A paddle that does not move from the AI's home spot (``StillPaddle``).
    case stillPaddle
    /// The Robot Air Hockey Challenge's baseline, ported (``SkirmishOpponent/KalmanGoalie``).
    case kalman
}

/// The first baseline: a paddle standing still at the AI's home spot, (160, 425) in its own frame.
///
/// It still sends its position every tick, so the server holds it there exactly as it would hold a player's.
package struct StillPaddle: PuckAgent {
    /// Where it stands, own frame: the ``SkirmishOpponent/Opponent``'s home.
    package static let spot = PuckShot.keeperSpot
    private var step: UInt32 = 0

    package init() {}

    package mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {}

    package mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {}

    package mutating func act(now: Instant) -> PaddleState? {
        step &+= 1
        return PaddleState(inputStep: step, x: Self.spot.x, y: Self.spot.y, vx: 0, vy: 0)
    }
}
