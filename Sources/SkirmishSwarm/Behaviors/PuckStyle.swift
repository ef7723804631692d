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
    /// between the puck and its goal mouth and clears the puck only when it comes close.
    package func aim(puck: TableSnapshot.Puck?, inputStep: UInt32, phase: Int) -> PuckTarget {
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
            if puck.y >= 330 {
                if slow, windingUp { return PuckTarget(x: puck.x, y: min(puck.y + 80, 445)) }
                return PuckTarget(x: puck.x, y: min(puck.y + 25, 445))
            }
            return PuckTarget(x: min(max(puck.x, 100), 220), y: 430)
        case .idle:
            return PuckTarget(x: 160, y: 420)
        }
    }
}
