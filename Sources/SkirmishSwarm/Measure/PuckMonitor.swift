import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// The checks every Puck brain makes on what the server sends, whatever plays the paddle.
///
/// Every snapshot is checked against a replica that predicts it from the previous one with the shared physics and
/// this bot's own inputs (``sent(_:)``) — a desync episode names the part, its first divergent tick and the detection
/// delay (`skirmish_desync_detection_seconds`) — compared with the brain's own prediction of the puck for
/// that tick (mispredictions, DESIGN §4: more than 2 px), and timed against the server's tick clock (snapshot age);
/// goals and the end of the match are checked against the replica too, and matches started and completed are
/// counted. ``PuckPlayer`` predicts with the replica, ``AIPlayer`` with the opponent's own predictor.
struct PuckMonitor {
    private(set) var replica = PuckReplica(seat: 0)
    /// The newest snapshot received.
    private(set) var latest: TableSnapshot?
    private(set) var isMatchOver = false
    private var desyncEpisode = false
    private var started = false
    /// The highest score seen in snapshots and in goals (kept apart: a resent goal may arrive after a newer
    /// snapshot), for the `score_monotonic` check.
    private var snapshotScore: (me: UInt8, them: UInt8) = (0, 0)
    private var goalScore: (me: UInt8, them: UInt8) = (0, 0)
    /// The smallest `receive time − tick / 60` seen: the server's tick clock offset plus the fastest one-way trip.
    private var clockOffset = Double.infinity

    mutating func connected(seat: Int) {
        replica = PuckReplica(seat: seat)
    }

    /// Tells the replica an input this bot sent, so it can predict its own paddle.
    mutating func sent(_ input: PaddleState) {
        replica.sent(input)
    }

    /// The replica's prediction of the puck at `snapshot`'s tick, from the previous snapshot with the paddles held.
    ///
    /// `mutating` although it changes nothing: called on a brain's stored monitor, a mutating method works on it in
    /// place, where a non-mutating one gets a copy of the whole replica, twice per snapshot per context.
    mutating func replicaPrediction(for snapshot: TableSnapshot) -> TableSnapshot.Puck? {
        guard let previous = latest, SerialNumber.follows(snapshot.tick, previous.tick) else { return nil }
        return replica.predictPuck(ticks: Int(snapshot.tick &- previous.tick))
    }

    /// The puck `ticks` ahead of the newest snapshot (own frame), or `nil` before the first; `mutating` for the same
    /// reason as ``replicaPrediction(for:)``.
    mutating func predictedPuck(ticks: Int) -> TableSnapshot.Puck? {
        latest == nil ? nil : replica.predictPuck(ticks: ticks)
    }

    /// Checks one message from the server. For a snapshot, `predicted` is the brain's prediction of the puck at the
    /// snapshot's tick (own frame), made before it saw the snapshot; it is judged only between two playing snapshots.
    mutating func received(
        _ message: Message, at now: Instant, context: inout AgentContext<SnapConnection>,
        predicted: TableSnapshot.Puck? = nil
    ) {
        switch message {
        case .tableSnapshot(let snapshot):
            measureAge(snapshot, at: now, context: &context)
            if let previous = latest, previous.phase == .playing, snapshot.phase == .playing,
                SerialNumber.follows(snapshot.tick, previous.tick), let predicted
            {
                let dx = predicted.x - snapshot.puck.x
                let dy = predicted.y - snapshot.puck.y
                let error = Double((dx * dx + dy * dy).squareRoot())
                context.meters.record(context.meters.predictionError, value: error)
                if error > 2 { context.meters.shard.add(context.meters.mispredictions) }
            }
            let result = replica.apply(snapshot)
            context.check(
                result, episode: &desyncEpisode, divergence: replica.divergence, tick: snapshot.tick,
                detectionSeconds: result.isOK
                    ? nil : detectionDelay(since: replica.divergence?.tick ?? snapshot.tick, at: now, context: context))
            if !started, snapshot.phase == .playing {
                started = true
                context.meters.shard.add(context.meters.matchesStarted)
            }
            if latest.map({ Self.newer(snapshot, than: $0) }) ?? true {
                // Only a newer snapshot is judged: an older one overtaken on the way may show an older score.
                context.check(
                    .scoreMonotonic,
                    passed: snapshot.myScore >= snapshotScore.me && snapshot.theirScore >= snapshotScore.them)
                snapshotScore = (max(snapshotScore.me, snapshot.myScore), max(snapshotScore.them, snapshot.theirScore))
                latest = snapshot
            }
        case .goalScored(let goal):
            context.check(
                .scoreMonotonic, passed: goal.myScore >= goalScore.me && goal.theirScore >= goalScore.them)
            goalScore = (max(goalScore.me, goal.myScore), max(goalScore.them, goal.theirScore))
            let result = replica.apply(goal)
            context.check(
                result, episode: &desyncEpisode, divergence: replica.divergence, tick: goal.tick,
                detectionSeconds: result.isOK ? nil : detectionDelay(since: goal.tick, at: now, context: context))
        case .puckMatchOver(let over):
            context.check(replica.apply(over), episode: &desyncEpisode)
            if !isMatchOver { context.meters.shard.add(context.meters.matchesCompleted) }
            isMatchOver = true
        case .otherClientQuit, .serverQuit:
            isMatchOver = true
        default:
            break
        }
    }

    private static func newer(_ a: TableSnapshot, than b: TableSnapshot) -> Bool {
        a.tick == b.tick ? a.phase.rawValue > b.phase.rawValue : SerialNumber.follows(a.tick, b.tick)
    }

    /// Seconds from server tick `tick` to `now`, with the server's clock estimated as for the snapshot age (`nil`
    /// before the first playing snapshot).
    private func detectionDelay(since tick: UInt32, at now: Instant, context: AgentContext<SnapConnection>) -> Double? {
        guard clockOffset.isFinite else { return nil }
        let offset = now.seconds - Double(tick) / Double(PuckConstants.tickRate)
        return max(offset - clockOffset + context.minimumRTT / 2, 0)
    }

    /// Snapshot age = receive time − the server's time for the snapshot's tick, with the server's clock estimated as
    /// the fastest-arriving snapshot's offset minus half the smallest round trip.
    ///
    /// The server's tick clock stops while a match waits for players or pauses for a dropped one; an offset more than
    /// a second above the estimate means such a stop, and the estimate is re-anchored instead of recording an age.
    private mutating func measureAge(
        _ snapshot: TableSnapshot, at now: Instant, context: inout AgentContext<SnapConnection>
    ) {
        guard snapshot.phase == .playing || snapshot.phase == .goalPause else { return }
        let offset = now.seconds - Double(snapshot.tick) / Double(PuckConstants.tickRate)
        if offset - clockOffset > 1 { clockOffset = offset }
        clockOffset = min(clockOffset, offset)
        let age = offset - clockOffset + context.minimumRTT / 2
        context.meters.record(context.meters.snapshotAge, seconds: max(age, 0))
    }
}

/// Input times fixed when the seat is granted (input *k* at t₀ + φ + k / rate), so a stalled loop shows as tick
/// lateness instead of silently sending fewer inputs (no coordinated omission).
///
/// φ, drawn once per bot in [0, 1 / rate), is the bot's own frame phase. A real client's frames are not aligned to
/// the moment its seat was granted; without φ, bots seated in one burst (a ramp step, a server tick's Welcomes)
/// would all send in the same instant, every period — a burst no crowd of players makes, which the generator then
/// pays for as lateness.
struct InputSchedule {
    let period: Int64
    /// This bot's frame phase, φ.
    private let phase: Int64
    private var start = Instant.distantFuture
    /// Inputs accounted for so far.
    private(set) var step: UInt32 = 0

    init(rate: Double, random: inout SeededRandom) {
        period = Int64((1e9 / max(rate, 1)).rounded())
        phase = Int64.random(in: 0..<period, using: &random)
    }

    mutating func begin(at now: Instant) {
        start = now.advanced(byNanoseconds: phase)
        step = 0
    }

    /// When the next input is due.
    var next: Instant { start.advanced(byNanoseconds: Int64(step) * period) }

    /// Skips every input that fell due before `now` without accounting it: the player was away on purpose, so
    /// those inputs were never meant to be sent and say nothing about the generator.
    mutating func skip(until now: Instant) {
        guard now > start else { return }
        // The first input due at or after `now` is the next one: nothing before it was ever meant to go out.
        let next = (now.nanoseconds(since: start) + period - 1) / period
        if next > Int64(step) { step = UInt32(truncatingIfNeeded: next) }
    }

    /// Accounts every input due by `now` — its lateness, and whether it was on time (within 5 ms) — and returns how
    /// many there were; the caller sends only the newest (the server keeps the latest anyway).
    @discardableResult
    mutating func catchUp(now: Instant, meters: Meters) -> Int {
        var due = next
        var count = 0
        while due <= now {
            let lateness = Double(now.nanoseconds(since: due)) / 1e9
            meters.record(meters.tickLateness, seconds: lateness)
            meters.shard.add(lateness > 0.005 ? meters.inputsLate : meters.inputsSent)
            step &+= 1
            count += 1
            due = next
        }
        return count
    }
}
