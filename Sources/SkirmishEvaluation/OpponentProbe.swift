import SkirmishGames
import SkirmishOpponent
import SkirmishWire

/// What `ai-eval` measures on the AI's side of a session, from what that client really received.
///
/// - **Prediction error** at horizons of 3, 6 and 12 ticks (50, 100, 200 ms): for every snapshot S, the AI's
///   predictor is run from the newest earlier snapshot at least that many ticks older (3–4, 6–7, 12–13 ticks, since
///   snapshots come every second tick) — with the AI's own inputs and the other paddle dead-reckoned, exactly as it
///   plays — and compared with S's puck. Spans across a goal, a pause or a serve are skipped.
/// - **Shots** (with the server's shot machine): each served ``ShotEvent`` gives the served puck; the shared physics
///   gives where its free path crosses the defence line. When the puck reaches the AI's paddle or that line, the
///   *intercept error* is |crossing the AI had planned − real crossing|, taking the newest plan that reached the
///   server by then and was made from a snapshot after the serve (or, without one, the guess of the plan in effect).
///   `shot … saved` / `missed` gives the result.
package struct OpponentProbe: Sendable {
    package struct Shot: Sendable {
        var number: Int
        var bounces: Int
        var servedTick: UInt32
        var crossingX: Float?
        var crossingTicks: Int?
        var interceptError: Double?
        var saved: Bool?
    }

    package static let horizons = [3, 6, 12]

    package let seat: Int
    /// Shots to play before the session is complete; `nil` in a match.
    package let shotTarget: Int?
    private(set) var predictionErrors: [Samples] = Array(repeating: Samples(), count: horizons.count)
    private(set) var shots: [Shot] = []
    private var recent: [TableSnapshot] = []
    private var plans: [(step: UInt32, plan: Plan)] = []
    private var current: Int?

    package init(seat: Int, shotTarget: Int?) {
        self.seat = seat
        self.shotTarget = shotTarget
    }

    package var completedShots: Int { shots.filter { $0.saved != nil }.count }

    package var isComplete: Bool { shotTarget.map { completedShots >= $0 } ?? false }

    /// After each decision: the plan, by input step.
    package mutating func decided(_ opponent: Opponent) {
        let step = opponent.lastInputStep
        if plans.last?.step != step { plans.append((step, opponent.plan)) }
        if plans.count > 512 { plans.removeFirst(256) }
    }

    /// A snapshot, before the AI sees it.
    package mutating func snapshot(_ snapshot: TableSnapshot, opponent: Opponent) {
        if let newest = recent.last, !SerialNumber.follows(snapshot.tick, newest.tick) { return }
        if shotTarget == nil { measurePrediction(snapshot, opponent: opponent) }
        recent.append(snapshot)
        if recent.count > 48 { recent.removeFirst(16) }
        if let current { measureIntercept(shot: current, at: snapshot) }
    }

    private mutating func measurePrediction(_ snapshot: TableSnapshot, opponent: Opponent) {
        guard snapshot.phase == .playing else { return }
        for (index, horizon) in Self.horizons.enumerated() {
            guard
                let base = recent.last(where: { Int(snapshot.tick &- $0.tick) >= horizon }),
                base.phase == .playing, base.myScore == snapshot.myScore, base.theirScore == snapshot.theirScore,
                Int(snapshot.tick &- base.tick) <= horizon + 2
            else { continue }
            let predicted = opponent.predictPuck(from: base, ticks: Int(snapshot.tick &- base.tick))
            let dx = Double(predicted.x - snapshot.puck.x)
            let dy = Double(predicted.y - snapshot.puck.y)
            predictionErrors[index].add((dx * dx + dy * dy).squareRoot())
        }
    }

    /// A Chat line from the server: the shot machine's announcements (``ShotEvent``); other text is ignored.
    package mutating func chat(_ text: String) {
        switch ShotEvent(text: text) {
        case .served(let number, let tick, let puck, let bounces):
            let path = PuckPath(following: puck, defender: seat, line: Opponent.defenceLine, maxTicks: 300)
            shots.append(
                Shot(
                    number: Int(number), bounces: bounces, servedTick: tick, crossingX: path.crossingX,
                    crossingTicks: path.crossingTicks))
            current = shots.count - 1
            // Snapshots of the shot that arrived before its announcement.
            for snapshot in recent where SerialNumber.follows(snapshot.tick, tick) {
                measureIntercept(shot: shots.count - 1, at: snapshot)
            }
        case .ended(let number, let saved):
            guard let index = shots.lastIndex(where: { $0.number == Int(number) }) else { return }
            shots[index].saved = saved
            if current == index { current = nil }
        case nil:
            break
        }
    }

    private mutating func measureIntercept(shot index: Int, at snapshot: TableSnapshot) {
        let shot = shots[index]
        guard shot.interceptError == nil, let crossingX = shot.crossingX, let crossingTicks = shot.crossingTicks,
            SerialNumber.follows(snapshot.tick, shot.servedTick)
        else { return }
        let dx = snapshot.puck.x - snapshot.me.x
        let dy = snapshot.puck.y - snapshot.me.y
        let reached = dx * dx + dy * dy < 64 * 64
        guard reached || Int(snapshot.tick &- shot.servedTick) >= crossingTicks else { return }
        shots[index].interceptError = Double(
            abs(plannedCrossing(applied: snapshot.lastInputStep, since: shot.servedTick) - crossingX))
    }

    /// The crossing of the newest plan the server had applied by input step `applied` that predicted the crossing
    /// from a snapshot at or after `served`; without one, the guess of the plan in effect.
    private func plannedCrossing(applied: UInt32, since served: UInt32) -> Float {
        var inEffect: Plan?
        for entry in plans.reversed() where !SerialNumber.follows(entry.step, applied) {
            if inEffect == nil { inEffect = entry.plan }
            if entry.plan.crossingPredicted, !SerialNumber.precedes(entry.plan.snapshotTick, served) {
                return entry.plan.crossingX
            }
        }
        return inEffect?.crossingX ?? PuckConstants.width / 2
    }
}
