import NIOCore
import SkirmishWire

/// A plain reactive opponent for practice until the predicting AI of `SkirmishOpponent` is wired in.
///
/// It reads the newest snapshot only (no prediction across latency): it guards its goal mouth when the puck is in the
/// far half, goes for the puck when it comes over, and winds up behind a slow puck to strike it toward the far goal.
/// Difficulty sets its speed cap and how late it reacts, so `easy` is beatable and `expert` is not a pushover.
struct StandInOpponent: OpponentBrain {
    private let speed: Float
    private let reactionTicks: Int
    private var snapshots: [TableSnapshot] = []
    private var position: (x: Float, y: Float) = (160, 420)
    private var ticks = 0

    init(difficulty: Difficulty) {
        switch difficulty {
        case .easy: (speed, reactionTicks) = (4, 9)
        case .medium: (speed, reactionTicks) = (7, 5)
        case .hard: (speed, reactionTicks) = (11, 2)
        case .expert: (speed, reactionTicks) = (16, 0)
        }
    }

    mutating func welcomed(_ welcome: Welcome, now: NIODeadline) {
        snapshots.removeAll()
        position = (160, 420)
    }

    mutating func received(_ message: Message, at now: NIODeadline) {
        guard case .tableSnapshot(let snapshot) = message else { return }
        if snapshots.isEmpty { position = (snapshot.me.x, snapshot.me.y) }
        snapshots.append(snapshot)
        // Snapshots come every 2 ticks: keep enough to look `reactionTicks` into the past.
        if snapshots.count > reactionTicks / 2 + 1 { snapshots.removeFirst() }
    }

    mutating func measured(rtt: TimeAmount, at now: NIODeadline) {}

    mutating func decide(now: NIODeadline) -> (x: Float, y: Float) {
        ticks &+= 1
        guard let seen = snapshots.first else { return position }
        let puck = seen.puck
        let slow = abs(puck.vx) + abs(puck.vy) < 1.5
        let windingUp = (ticks / 14) % 2 == 0
        var goal: (x: Float, y: Float)
        if puck.y >= 230 {
            goal =
                slow && windingUp
                ? (puck.x, min(puck.y + 90, 440)) : (puck.x + (puck.x < 160 ? 6 : -6), min(puck.y + 22, 440))
        } else {
            goal = (160 + (puck.x - 160) * 0.45, 415)
        }
        let dx = goal.x - position.x
        let dy = goal.y - position.y
        let distance = (dx * dx + dy * dy).squareRoot()
        if distance > speed {
            goal = (position.x + dx / distance * speed, position.y + dy / distance * speed)
        }
        position = (min(max(goal.x, 40), 280), min(max(goal.y, 280), 440))
        return position
    }
}
