import SkirmishGames
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// A Puck player written outside the library: it shadows the puck's x on a line of its own half (its goal line, or
/// `depth:` pixels up from it), checks every snapshot against a replica, and adds what it saw to a shared
/// ``MirrorTally``.
///
/// It is the worked example of the DocC article "Writing a behaviour", whose Swift blocks are this target's code, and
/// uses only public API: the runtime owns the socket, the protocol, pings and the clock, and calls it with events and
/// the time.
struct MirrorPlayer: Agent {
    typealias Connection = SnapConnection

    /// Where the paddle may stand: its own half, in its own frame (every client sees itself at the bottom, so this is
    /// the same for both seats).
    static let box = PuckConstants.paddleBox(seat: 0)

    private let tally: MirrorTally
    /// Nanoseconds between inputs.
    private let period: Int64
    /// The line the paddle keeps to: `depth` pixels up from its goal line.
    private let y: Float
    private var replica = PuckReplica(seat: 0)
    private var desyncEpisode = false
    private var started = false
    private var inputsApplied = false
    /// The newest puck x seen (own frame); the puck starts at the centre.
    private var puckX = PuckConstants.centre.x
    private var step: UInt32 = 0
    private var next: Instant?
    private(set) var isMatchOver = false

    init(context: inout AgentContext<SnapConnection>, tally: MirrorTally) {
        self.tally = tally
        period = Int64((1e9 / context.persona.inputRate).rounded())
        // Its own persona key, as its registration decoded it from the script (`depth: 80`); none: the goal line.
        let options = context.persona.options.get(MirrorOptions.self) ?? MirrorOptions()
        y = Self.box.y.upperBound - options.depth
    }

    var nextWake: Instant? { isMatchOver ? nil : next }

    mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        replica = PuckReplica(seat: Int(welcome.seat))
        next = context.now
        tally.add(.seated)
    }

    mutating func resumed(context: inout AgentContext<SnapConnection>) {
        // Inputs that fell due while away were skipped on purpose: start again from now.
        next = context.now
    }

    mutating func wake(context: inout AgentContext<SnapConnection>) {
        guard let due = next, due <= context.now else { return }
        step &+= 1
        let x = min(max(puckX, Self.box.x.lowerBound), Self.box.x.upperBound)
        let input = PaddleState(inputStep: step, x: x, y: y, vx: 0, vy: 0)
        // The replica predicts each snapshot from the one before; with the inputs sent it predicts the own paddle.
        replica.sent(input)
        context.send(.paddleState(input))
        // Send times stay on the schedule fixed at seating; inputs missed while the loop was late are skipped.
        let missed = context.now.nanoseconds(since: due) / period
        next = due.advanced(byNanoseconds: period * (missed + 1))
    }

    mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        switch message {
        case .tableSnapshot(let snapshot):
            let result = replica.apply(snapshot)
            context.check(result, episode: &desyncEpisode, divergence: replica.divergence, tick: snapshot.tick)
            puckX = replica.latest?.puck.x ?? puckX
            tally.add(.snapshots)
            guard snapshot.phase == .playing else { return }
            if !started {
                started = true
                context.recordMatchStarted()
            }
            if !inputsApplied, snapshot.lastInputStep > 0 {
                inputsApplied = true
                tally.add(.inputsApplied)
            }
            tally.add(.playingSnapshots)
            if abs(snapshot.me.y - y) <= 1 { tally.add(.atDepth) }
            tally.record(depth: Self.box.y.upperBound - snapshot.me.y)
            // Off the centre line, standing still would not pass for shadowing.
            guard abs(snapshot.puck.x - PuckConstants.centre.x) > PuckConstants.paddleRadius else { return }
            tally.add(.offCentre)
            let wanted = min(max(snapshot.puck.x, Self.box.x.lowerBound), Self.box.x.upperBound)
            if abs(snapshot.me.x - wanted) <= PuckConstants.paddleRadius { tally.add(.shadowing) }
        case .goalScored(let goal):
            context.check(replica.apply(goal), episode: &desyncEpisode)
        case .puckMatchOver(let over):
            context.check(replica.apply(over), episode: &desyncEpisode)
            if !isMatchOver { context.recordMatchCompleted() }
            isMatchOver = true
        case .otherClientQuit, .serverQuit:
            isMatchOver = true
        default:
            break
        }
    }
}
