import SkirmishWire

/// What a Puck client keeps: the latest exact table from the server's snapshots, each one predicted from the one
/// before with the shared physics and compared bit for bit, and checked against the reliable goal and match-over
/// messages.
///
/// A snapshot's own hash only proves it arrived intact; the desync check is the prediction (see
/// `PuckReplica+Prediction.swift`): the replica runs the physics from the previous exact snapshot to the new one's
/// tick, with the inputs this client sent (``sent(_:)``), and names the part that differs (`puck`, `paddles`,
/// `score`, `phase`) wherever the outcome cannot depend on the other player's unknown moves. After a desync it
/// re-syncs: the next snapshot is adopted without comparison.
///
/// Network faults never make it report a desync: stale, duplicated and reordered snapshots are ignored (only a
/// snapshot with a newer tick is adopted), a lost snapshot only widens what is not predicted, and the score checks
/// allow `GoalScored` to arrive before or after the snapshots of the same ticks.
public struct PuckReplica: Sendable {
    /// The seat this replica views the table from.
    public let seat: Int
    /// The latest adopted snapshot, in this seat's frame.
    public private(set) var latest: TableSnapshot?
    /// The canonical table of ``latest``.
    public private(set) var match: PuckMatch?
    /// Goals known from `GoalScored`, in arrival order (at most ``maxGoals``).
    public private(set) var goals: [GoalScored] = []
    /// The match-over message, once received.
    public private(set) var over: PuckMatchOver?
    /// Snapshots adopted, and ignored as stale or duplicate.
    public private(set) var adopted = 0
    /// Snapshots ignored because they were not newer than the last one adopted (stale or duplicate).
    public private(set) var stale = 0

    /// The last desync found, in detail (part, tick, expected and observed values); set only when a check fails.
    public internal(set) var divergence: ReplicaDivergence?
    /// The inputs this client sent, by step modulo ``inputCapacity`` (fixed size: no allocation per input).
    var inputs = InlineArray<32, SentInput>(repeating: .empty)
    /// The newest input step sent (0 before the first).
    var newestSent: UInt32 = 0
    /// Whether this client sent an input numbered 0: the server applies each such input at once without moving
    /// `lastInputStep`, so from then on a snapshot cannot tell which target its paddle followed.
    var sentUnnumbered = false
    /// How many snapshots were compared, by part.
    package internal(set) var compared = ComparedParts()
    /// Set by a desync: the next newer snapshot is adopted without comparison.
    private var resync = false

    /// More goals than a match can have (13); beyond this a broken server cannot grow the replica.
    public static let maxGoals = 2 * Int(PuckConstants.winningScore)

    /// An empty replica for the client sitting in `seat` (0 or 1, from `Welcome.seat`).
    public init(seat: Int) {
        self.seat = seat
        // Room for a whole match's goals now, where a bot allocates anyway (its seat was granted): not at the match's
        // first goal, in the middle of play.
        goals.reserveCapacity(Self.maxGoals)
    }

    /// Adopts a newer authoritative snapshot (in this seat's frame) after checking it.
    ///
    /// Returns `.desync(part: "hash")` when the snapshot's fields do not reproduce its `stateHash` (a transport
    /// integrity failure; the snapshot is then not adopted); `.desync(part:)` with `puck`, `paddles`, `score` or
    /// `phase` when it differs from the replica's prediction (``divergence`` then says where and by how much); and
    /// `.desync(part: "score")` when its scores contradict a known goal or the match-over message. Stale or
    /// duplicate snapshots are ignored and return `.ok`.
    public mutating func apply(_ snapshot: TableSnapshot) -> ReplicaCheck {
        divergence = nil
        if let latest, !Self.newer(snapshot, than: latest) {
            stale += 1
            return .ok
        }
        let table = PuckMatch(snapshot: snapshot, seat: seat)
        guard table.stateHash == snapshot.stateHash else {
            divergence = ReplicaDivergence(
                part: "hash", tick: snapshot.tick, expected: "stateHash=\(table.stateHash)",
                observed: "stateHash=\(snapshot.stateHash)")
            return .desync(part: "hash")
        }
        let result = predictionCheck(
            base: resync ? nil : match, baseInputStep: latest?.lastInputStep ?? 0, observed: table, snapshot: snapshot)
        resync = !result.isOK
        latest = snapshot
        match = table
        adopted += 1
        guard result.isOK else { return result }
        for goal in goals where !Self.consistent(snapshot, goal) {
            return scoreDesync(snapshot.tick, expected: goal, observed: snapshot)
        }
        if let over, snapshot.phase == .over, snapshot.myScore != over.myScore || snapshot.theirScore != over.theirScore
        {
            divergence = ReplicaDivergence(
                part: "score", tick: snapshot.tick, expected: "my=\(over.myScore) their=\(over.theirScore)",
                observed: "my=\(snapshot.myScore) their=\(snapshot.theirScore)")
            return .desync(part: "score")
        }
        return .ok
    }

    private mutating func scoreDesync(_ tick: UInt32, expected goal: GoalScored, observed: TableSnapshot)
        -> ReplicaCheck
    {
        divergence = ReplicaDivergence(
            part: "score", tick: tick,
            expected: "goal at tick \(goal.tick): my=\(goal.myScore) their=\(goal.theirScore)",
            observed: "my=\(observed.myScore) their=\(observed.theirScore)")
        return .desync(part: "score")
    }

    /// Records a goal and checks it against the other goals and the latest snapshot.
    public mutating func apply(_ goal: GoalScored) -> ReplicaCheck {
        divergence = nil
        if goals.contains(goal) { return .ok }
        let before = goals.last
        if goals.count >= Self.maxGoals { goals.removeFirst() }
        goals.append(goal)
        if let before {
            let grew = Int(goal.myScore) + Int(goal.theirScore) == Int(before.myScore) + Int(before.theirScore) + 1
            guard goal.tick > before.tick, goal.myScore >= before.myScore, goal.theirScore >= before.theirScore, grew
            else { return .desync(part: "score") }
        } else if Int(goal.myScore) + Int(goal.theirScore) != 1 {
            return .desync(part: "score")
        }
        let scorerScore = goal.scorer == .me ? goal.myScore : goal.theirScore
        guard scorerScore > (before.map { goal.scorer == .me ? $0.myScore : $0.theirScore } ?? 0) else {
            return .desync(part: "score")
        }
        if let latest, !Self.consistent(latest, goal) { return .desync(part: "score") }
        return .ok
    }

    /// Records the end of the match and checks its scores against the goals (which, being reliable and earlier,
    /// have all arrived) and the latest snapshot.
    public mutating func apply(_ over: PuckMatchOver) -> ReplicaCheck {
        divergence = nil
        self.over = over
        let last = goals.last
        guard over.myScore == last?.myScore ?? 0, over.theirScore == last?.theirScore ?? 0 else {
            return .desync(part: "score")
        }
        if let latest, latest.phase == .over,
            latest.myScore != over.myScore || latest.theirScore != over.theirScore
        {
            return .desync(part: "score")
        }
        let winning = PuckConstants.winningScore
        if over.myScore >= winning && over.winner != .me || over.theirScore >= winning && over.winner != .them {
            return .desync(part: "phase")
        }
        return .ok
    }

    /// Predicts the puck `ticks` ahead (at most 600) in this seat's frame, running the shared physics from the
    /// latest exact snapshot with both paddles held where they are; the resting puck before the first snapshot.
    public func predictPuck(ticks: Int) -> TableSnapshot.Puck {
        guard let table = predict(ticks: ticks) else { return PuckMatch.restingPuck(angle: 0) }
        return PuckMatch.view(table.puck, seat: seat)
    }

    /// The canonical table `ticks` ahead (at most 600) of the latest snapshot, with this seat's paddle moving
    /// toward `myTarget` (own frame; `nil` holds it) and the other paddle dead-reckoned along its last velocity.
    public func predict(ticks: Int, myTarget: PuckTarget? = nil, deadReckonOpponent: Bool = false) -> PuckMatch? {
        guard var table = match else { return nil }
        let other = seat == 0 ? 1 : 0
        let them = table.paddle(of: other)
        var mine: PuckTarget? = myTarget
        let count = min(max(ticks, 0), 600)
        for k in 0..<count {
            var theirs: PuckTarget?
            if deadReckonOpponent {
                let ahead = Float(k + 1)
                let canonical = (them.x + them.vx * ahead, them.y + them.vy * ahead)
                let own = PuckMatch.view(x: canonical.0, y: canonical.1, seat: other)
                theirs = PuckTarget(x: own.x, y: own.y)
            }
            _ = seat == 0 ? table.step(mine, theirs) : table.step(theirs, mine)
            mine = nil
        }
        return table
    }

    /// Whether `a` is newer than `b`: a later tick, or the same tick in a later phase (`start()` and `forfeit`
    /// change the phase without stepping).
    static func newer(_ a: TableSnapshot, than b: TableSnapshot) -> Bool {
        if a.tick != b.tick { return a.tick > b.tick }
        return rank(a.phase) > rank(b.phase)
    }

    static func rank(_ phase: PuckPhase) -> Int {
        switch phase {
        case .waiting: 0
        case .playing, .goalPause: 1
        case .over: 2
        }
    }

    /// Whether `snapshot`'s scores agree with `goal` given their ticks.
    static func consistent(_ snapshot: TableSnapshot, _ goal: GoalScored) -> Bool {
        if snapshot.tick >= goal.tick {
            return snapshot.myScore >= goal.myScore && snapshot.theirScore >= goal.theirScore
        }
        return Int(snapshot.myScore) + Int(snapshot.theirScore) < Int(goal.myScore) + Int(goal.theirScore)
    }
}
