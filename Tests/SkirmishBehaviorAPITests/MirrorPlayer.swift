import NIOCore
import SkirmishGames
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// A Puck player written outside the library: it shadows the puck's x on its own goal line, checks every snapshot
/// against a replica, and adds what it saw to a shared ``MirrorTally``.
///
/// It is the worked example of the DocC article "Writing a behaviour" and uses only public API: the runtime owns the
/// socket, the protocol, pings and the clock, and calls it with events and the time.
struct MirrorPlayer: Agent {
    /// Where the paddle stands: the goal line of its own half, in its own frame (every client sees itself at the
    /// bottom, so this is the same for both seats).
    static let box = PuckConstants.paddleBox(seat: 0)

    private let tally: MirrorTally
    private let period: TimeAmount
    private var replica = PuckReplica(seat: 0)
    private var desyncEpisode = false
    private var started = false
    private var inputsApplied = false
    /// The newest puck x seen (own frame); the puck starts at the centre.
    private var puckX = PuckConstants.centre.x
    private var step: UInt32 = 0
    private var next: NIODeadline?
    private(set) var isMatchOver = false

    init(context: inout AgentContext, tally: MirrorTally) {
        self.tally = tally
        period = .nanoseconds(Int64((1e9 / context.persona.inputRate).rounded()))
    }

    var nextWake: NIODeadline? { isMatchOver ? nil : next }

    mutating func seated(_ welcome: Welcome, context: inout AgentContext) {
        replica = PuckReplica(seat: Int(welcome.seat))
        next = context.now
        tally.add(.seated)
    }

    mutating func resumed(context: inout AgentContext) {
        // Inputs that fell due while away were skipped on purpose: start again from now.
        next = context.now
    }

    mutating func wake(context: inout AgentContext) {
        guard let due = next, due <= context.now else { return }
        step &+= 1
        let x = min(max(puckX, Self.box.x.lowerBound), Self.box.x.upperBound)
        let input = PaddleState(inputStep: step, x: x, y: Self.box.y.upperBound, vx: 0, vy: 0)
        // The replica predicts each snapshot from the one before; with the inputs sent it predicts the own paddle.
        replica.sent(input)
        context.send(.paddleState(input))
        // Send times stay on the schedule fixed at seating; inputs missed while the loop was late are skipped.
        let missed = (context.now - due).nanoseconds / period.nanoseconds
        next = due + .nanoseconds(period.nanoseconds * (missed + 1))
    }

    mutating func received(_ message: Message, context: inout AgentContext) {
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
