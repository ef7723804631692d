import NIOCore
import SkirmishGames
import SkirmishTelemetry
import SkirmishWire

/// A scripted Puck player: `chaser` goes for the puck, `defender` guards its goal, `idle` holds still.
///
/// Inputs leave on a schedule fixed when the seat is granted (input *k* at t₀ + k / rate), so a stalled loop shows as
/// tick lateness instead of silently sending fewer inputs. Every snapshot is checked against the bot's replica
/// (desyncs), compared with the puck position predicted from the previous one (mispredictions), and timed against the
/// server's tick clock (snapshot age).
final class PuckPlayer: Brain {
    enum Style: Sendable { case chaser, defender, idle }

    private unowned let bot: any BotHandle
    private let style: Style
    private let period: Int64
    private var replica = PuckReplica(seat: 0)
    private var latest: TableSnapshot?
    private var firstInput = NIODeadline.distantFuture
    private var inputStep: UInt32 = 0
    private var desyncEpisode = false
    /// Offsets this bot's wind-up rhythm so two bots at one table do not move in lockstep.
    private let phase: Int
    private var started = false
    private(set) var isMatchOver = false
    /// The smallest `receive time − tick / 60` seen: the server's tick clock offset plus the fastest one-way trip.
    private var clockOffset = Double.infinity

    init(bot: any BotHandle, style: Style, inputRate: Double) {
        self.bot = bot
        self.style = style
        phase = Int.random(in: 0..<24, using: &bot.random)
        period = Int64((1e9 / max(inputRate, 1)).rounded())
    }

    var nextWake: NIODeadline? {
        guard style != .idle, !isMatchOver else { return nil }
        return firstInput + .nanoseconds(Int64(inputStep) * period)
    }

    func connected(_ welcome: Welcome, now: NIODeadline) {
        replica = PuckReplica(seat: Int(welcome.seat))
        firstInput = now
        inputStep = 0
    }

    func wake(now: NIODeadline) {
        guard style != .idle, !isMatchOver else { return }
        // Every input due by now is accounted for; only the newest is sent (the server keeps the latest anyway).
        var due = firstInput + .nanoseconds(Int64(inputStep) * period)
        while due <= now {
            let lateness = Double((now - due).nanoseconds) / 1e9
            bot.meters.record(bot.meters.tickLateness, seconds: lateness)
            bot.meters.shard.add(lateness > 0.005 ? bot.meters.inputsLate : bot.meters.inputsSent)
            inputStep &+= 1
            due = firstInput + .nanoseconds(Int64(inputStep) * period)
        }
        let target = aim()
        bot.send(.paddleState(PaddleState(inputStep: inputStep, x: target.x, y: target.y, vx: 0, vy: 0)))
    }

    /// Where this bot's paddle should go now, in its own frame (its goal at the bottom, y = 480).
    ///
    /// The chaser winds up behind a slow puck in its half and drives through it toward the far goal (two paddles
    /// pressing a resting puck from both sides would otherwise hold it still forever); the defender keeps between
    /// the puck and its goal mouth and clears the puck only when it comes close.
    private func aim() -> PuckTarget {
        guard latest != nil else { return PuckTarget(x: 160, y: 420) }
        let puck = replica.predictPuck(ticks: 2)
        let slow = abs(puck.vx) + abs(puck.vy) < 1.5
        let windingUp = ((Int(inputStep) + phase) / 12) % 2 == 0
        switch style {
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

    func received(_ message: Message, at now: NIODeadline) {
        switch message {
        case .tableSnapshot(let snapshot):
            measureAge(snapshot, at: now)
            if let previous = latest, previous.phase == .playing, snapshot.phase == .playing,
                SerialNumber.follows(snapshot.tick, previous.tick)
            {
                let predicted = replica.predictPuck(ticks: Int(snapshot.tick &- previous.tick))
                let dx = predicted.x - snapshot.puck.x
                let dy = predicted.y - snapshot.puck.y
                let error = Double((dx * dx + dy * dy).squareRoot())
                bot.meters.record(bot.meters.predictionError, value: error)
                if error > 2 { bot.meters.shard.add(bot.meters.mispredictions) }
            }
            bot.check(replica.apply(snapshot), episode: &desyncEpisode)
            if !started, snapshot.phase == .playing {
                started = true
                bot.meters.shard.add(bot.meters.matchesStarted)
            }
            latest = snapshot
        case .goalScored(let goal):
            bot.check(replica.apply(goal), episode: &desyncEpisode)
        case .puckMatchOver(let over):
            bot.check(replica.apply(over), episode: &desyncEpisode)
            if !isMatchOver { bot.meters.shard.add(bot.meters.matchesCompleted) }
            isMatchOver = true
        case .otherClientQuit, .serverQuit:
            isMatchOver = true
        default:
            break
        }
    }

    /// Snapshot age = receive time − the server's time for the snapshot's tick, with the server's clock estimated as
    /// the fastest-arriving snapshot's offset minus half the smallest round trip.
    ///
    /// The server's tick clock stops while a match waits for players or pauses for a dropped one; an offset more than
    /// a second above the estimate means such a stop, and the estimate is re-anchored instead of recording an age.
    private func measureAge(_ snapshot: TableSnapshot, at now: NIODeadline) {
        guard snapshot.phase == .playing || snapshot.phase == .goalPause else { return }
        let offset = bot.seconds(now) - Double(snapshot.tick) / Double(PuckConstants.tickRate)
        if offset - clockOffset > 1 { clockOffset = offset }
        clockOffset = min(clockOffset, offset)
        let age = offset - clockOffset + bot.minimumRTT / 2
        bot.meters.record(bot.meters.snapshotAge, seconds: max(age, 0))
    }
}
