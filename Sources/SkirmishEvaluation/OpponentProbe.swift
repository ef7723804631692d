import SkirmishGames
import SkirmishOpponent
import SkirmishWire

/// What `ai-eval` measures on the evaluated player's side of a session, from what that client really received.
///
/// - **Prediction error** at horizons of 3, 6 and 12 ticks (50, 100, 200 ms), in matches: for every snapshot S, the
///   AI's predictor is run from the newest earlier snapshot at least that many ticks older (3–4, 6–7, 12–13 ticks,
///   since snapshots come every second tick) — with the AI's own inputs and the other paddle dead-reckoned, exactly
///   as it plays — and compared with S's puck: the server's authoritative state at the predicted tick. Spans across a
///   goal, a pause or a serve are skipped.
/// - **Shots** (with the server's shot machine): each served ``ShotEvent`` is booked with its bounces; its `.ended`
///   event carries the outcome, the physical intercept error and the contact offset, all judged by the server's ``ShotReferee`` on the
///   authoritative table (never on this client's model of it). Any ``SkirmishOpponent/PuckAgent`` can be probed this
///   way, so baselines face the same shots.
package struct OpponentProbe: Sendable {
    package struct Shot: Sendable {
        var number: Int
        var bounces: Int
        var servedTick: UInt32
        /// The puck as served, in the defender's frame.
        var puck: TableSnapshot.Puck
        /// How the shot ended, `nil` while it is in play.
        var outcome: ShotReferee.Outcome?
        /// Paddle centre to puck centre at the tick the puck crossed the defence line, px (``ShotReferee``).
        var interceptError: Double?
        /// Paddle centre to the puck's line of travel at the defender's first contact, px (``ShotReferee``).
        var contactOffset: Double?

        /// Whether the shot was saved (stopped or returned); `nil` while it is in play.
        var saved: Bool? { outcome.map(\.isSave) }
    }

    package static let horizons = [3, 6, 12]

    package let seat: Int
    /// Shots to play before the session is complete; `nil` in a match.
    package let shotTarget: Int?
    private(set) var predictionErrors: [Samples] = Array(repeating: Samples(), count: horizons.count)
    private(set) var shots: [Shot] = []
    private var recent: [TableSnapshot] = []

    package init(seat: Int, shotTarget: Int?) {
        self.seat = seat
        self.shotTarget = shotTarget
    }

    package var completedShots: Int { shots.filter { $0.outcome != nil }.count }

    package var isComplete: Bool { shotTarget.map { completedShots >= $0 } ?? false }

    /// A snapshot, before the AI sees it.
    package mutating func snapshot(_ snapshot: TableSnapshot, opponent: Opponent) {
        if let newest = recent.last, !SerialNumber.follows(snapshot.tick, newest.tick) { return }
        if shotTarget == nil { measurePrediction(snapshot, opponent: opponent) }
        recent.append(snapshot)
        if recent.count > 48 { recent.removeFirst(16) }
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
            shots.append(Shot(number: Int(number), bounces: bounces, servedTick: tick, puck: puck))
        case .ended(let number, let outcome, let error, let offset):
            guard let index = shots.lastIndex(where: { $0.number == Int(number) }), shots[index].outcome == nil
            else { return }
            shots[index].outcome = outcome
            shots[index].interceptError = error.map(Double.init)
            shots[index].contactOffset = offset.map(Double.init)
        case nil:
            break
        }
    }
}
