import SkirmishGames
import SkirmishWire

/// The scripted Puck styles: `chaser` goes for the puck, `defender` guards its goal, `idle` holds still.
///
/// Their aim is a pure function shared by the swarm's ``PuckPlayer`` and by evaluations that pit the AI opponent
/// against the `chaser` (``ScriptedPuckAgent``), so "the chaser" means one thing everywhere.
package enum PuckStyle: Sendable, Hashable {
    case chaser, defender, idle

    /// Where the paddle should go, in the player's own frame (its goal at the bottom, y = 480).
    ///
    /// `puck` is the puck two ticks ahead (or `nil` before the first snapshot); `inputStep` and `phase` drive the
    /// wind-up rhythm. The chaser winds up behind a slow puck in its half and drives through it toward the far goal
    /// (two paddles pressing a resting puck from both sides would otherwise hold it still forever); the defender keeps
    /// between the puck and its goal mouth and clears the puck when it comes close or comes to rest in its half.
    /// `previous` is the target it sent last time: the defender moves sideways at a human pace from there.
    package func aim(puck: TableSnapshot.Puck?, inputStep: UInt32, phase: Int, previous: PuckTarget?) -> PuckTarget {
        guard let puck else { return PuckTarget(x: 160, y: 420) }
        let slow = abs(puck.vx) + abs(puck.vy) < 1.5
        let windingUp = ((Int(inputStep) + phase) / 12) % 2 == 0
        switch self {
        case .chaser:
            if puck.y >= 215 {
                if slow, windingUp { return PuckTarget(x: puck.x, y: min(puck.y + 100, 440)) }
                return PuckTarget(x: puck.x + (puck.x < 160 ? 8 : -8), y: min(puck.y + 25, 440))
            }
            return PuckTarget(x: 160 + (puck.x - 160) * 0.5, y: 400)
        case .defender:
            // A puck that came to rest where it can still reach it is cleared too: left there, no one would ever
            // touch it again and the match would never end.
            if puck.y >= 330 || (slow && puck.y >= 225) {
                // It clears at the far goal, alternately at each post: winding up on the far side of the puck from
                // the goal, then driving through it.
                let post: Float = (Int(inputStep) / 48) % 2 == 0 ? 92 : 228
                let dx = post - puck.x
                let dy = -puck.y
                let length = max((dx * dx + dy * dy).squareRoot(), 1)
                let reach: Float = windingUp ? -90 : 15
                return PuckTarget(x: puck.x + dx / length * reach, y: puck.y + dy / length * reach)
            }
            // Like a person it moves across the mouth at a human pace, a few pixels per input, so a fast shot at an
            // angle beats it. A goalie that was always in the right place would play one match forever.
            let want = min(max(puck.x, 100), 220)
            guard let previous else { return PuckTarget(x: want, y: 430) }
            let step = Self.defenderStride
            return PuckTarget(x: min(max(want, previous.x - step), previous.x + step), y: 430)
        case .idle:
            return PuckTarget(x: 160, y: 420)
        }
    }

    /// How far the defender's paddle moves sideways per input while it guards the mouth, pixels.
    static let defenderStride: Float = 4

    /// The wind-up rhythm of a player in `seat` whose own random offset is `offset`: the two seats wind up in
    /// opposite halves of the rhythm, since two players pressing a resting puck from both sides in step would cancel
    /// each other's hits and hold it still forever.
    package static func rhythm(offset: Int, seat: Int) -> Int { offset % 4 + seat * 12 }
}
