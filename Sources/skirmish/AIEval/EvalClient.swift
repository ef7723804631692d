import NIOCore
import SkirmishNet
import SkirmishOpponent
import SkirmishWire

/// Seconds on the local monotonic clock: the time base every agent is given.
func seconds(_ deadline: NIODeadline) -> Double { Double(deadline.uptimeNanoseconds) / 1e9 }

/// One player of an evaluation: a ``SkirmishOpponent/PuckAgent`` on a real ``SkirmishNet/ClientSession`` (UDP on
/// loopback, through the session's link emulator), acting once per server tick on deadlines fixed in advance and
/// pinging every 200 ms.
///
/// Confined to its event loop (held in a `NIOLoopBound`). The AI side carries an ``OpponentProbe`` that measures it;
/// the decision time of every `act` is timed here, outside the agent, which never reads a clock.
final class EvalClient<Agent: PuckAgent> {
    /// What the client saw of its match.
    struct Result: Sendable {
        var seat: Int?
        var myScore: UInt8 = 0
        var theirScore: UInt8 = 0
        var over: PuckMatchOver?
        var ended: String?
        var decisionNanos = Samples()
        /// How late each tick ran after its due time, in nanoseconds: the event loop's own delay, which adds to the
        /// emulated latency and says whether the machine kept up.
        var lateNanos = Samples()
        var probe: OpponentProbe?
    }

    let loop: any EventLoop
    private let configuration: ClientSession.Configuration
    private let acts: Bool
    private let makeAgent: @Sendable (Int) -> Agent
    private var session: ClientSession?
    private var agent: Agent?
    private var result = Result()
    private var tickStart = NIODeadline.now()
    private var ticks: Int64 = 0
    private var tickTask: Scheduled<Void>?
    private var tickDue = NIODeadline.now()
    private var pings: UInt32 = 0
    private var nextPing = NIODeadline.uptimeNanoseconds(0)
    private var done = false
    private let progress: EvalProgress?
    let welcomed: EventLoopPromise<Welcome>
    let finished: EventLoopPromise<Void>

    /// A client that joins with `configuration`; `acts` is false for an idle seat (no inputs, no pings beyond the
    /// session's keepalives), and `probe` measures an ``Opponent`` agent.
    init(
        loop: any EventLoop, configuration: ClientSession.Configuration, acts: Bool, probe: OpponentProbe?,
        progress: EvalProgress?, makeAgent: @escaping @Sendable (Int) -> Agent
    ) {
        self.loop = loop
        self.progress = progress
        self.configuration = configuration
        self.acts = acts
        self.makeAgent = makeAgent
        result.probe = probe
        welcomed = loop.makePromise()
        finished = loop.makePromise()
    }

    func start() {
        let session = ClientSession(configuration: configuration, eventLoop: loop) { [unowned self] event in
            self.handle(event)
        }
        self.session = session
        session.connect()
    }

    /// Ends the client: a polite goodbye, then its result.
    func stop(reason: String = "stopped") -> Result {
        finish(reason)
        return result
    }

    private func finish(_ reason: String) {
        guard !done else { return }
        done = true
        result.ended = reason
        tickTask?.cancel()
        tickTask = nil
        session?.disconnect(reason: .quit)
        if result.seat == nil { welcomed.fail(EvalError("it ended before it was seated (\(reason))")) }
        finished.succeed()
    }

    private func handle(_ event: SessionEvent) {
        guard !done else { return }
        switch event {
        case .stateChanged(.connected(let welcome)):
            guard result.seat == nil else { return }
            result.seat = Int(welcome.seat)
            agent = makeAgent(Int(welcome.seat))
            welcomed.succeed(welcome)
            if acts { startTicking() }
        case .stateChanged(.disconnected(let cause)):
            finish("\(cause)")
        case .stateChanged:
            break
        case .message(let message, let receivedAt):
            receive(message, at: receivedAt)
        case .rtt(let amount):
            agent?.observeRoundTrip(Double(amount.nanoseconds) / 1e9, at: seconds(.now()))
        }
    }

    private func receive(_ message: Message, at receivedAt: NIODeadline) {
        switch message {
        case .tableSnapshot(let snapshot):
            let time = seconds(receivedAt)
            if result.probe != nil, let opponent = agent as? Opponent {
                result.probe!.snapshot(snapshot, opponent: opponent)
            }
            agent?.observe(snapshot, at: time)
            if snapshot.phase != .waiting {
                result.myScore = snapshot.myScore
                result.theirScore = snapshot.theirScore
            }
        case .chat(let chat):
            guard result.probe != nil else { return }
            let before = result.probe!.completedShots
            result.probe!.chat(chat.text)
            progress?.add(.shots, result.probe!.completedShots - before)
            if result.probe!.isComplete { finish("done") }
        case .puckMatchOver(let over):
            result.over = over
            result.myScore = over.myScore
            result.theirScore = over.theirScore
            finish("over")
        case .otherClientQuit, .serverQuit:
            finish("the other player left")
        default:
            break
        }
    }

    private func startTicking() {
        tickStart = .now()
        ticks = 0
        scheduleTick()
    }

    private func scheduleTick() {
        guard !done else { return }
        ticks += 1
        tickDue = tickStart + .nanoseconds(ticks * 1_000_000_000 / Int64(60))
        tickTask = loop.assumeIsolated().scheduleTask(deadline: tickDue) { [unowned self] in onTick() }
    }

    private func onTick() {
        guard !done, let session else { return }
        let now = NIODeadline.now()
        result.lateNanos.add(Double((now - tickDue).nanoseconds))
        if now >= nextPing {
            pings &+= 1
            session.send(.ping(Ping(player: 0, count: pings, sendTime: seconds(now))))
            nextPing = now + .milliseconds(Int64(Opponent.pingInterval * 1000))
        }
        if agent != nil {
            let before = NIODeadline.now()
            let input = agent!.act(now: seconds(now))
            result.decisionNanos.add(Double((NIODeadline.now() - before).nanoseconds))
            if result.probe != nil, let opponent = agent as? Opponent { result.probe!.decided(opponent) }
            if let input { session.send(.paddleState(input)) }
        }
        // A stalled loop re-anchors instead of firing a burst of catch-up ticks.
        if now - (tickStart + .nanoseconds(ticks * 1_000_000_000 / 60)) > .milliseconds(50) {
            tickStart = now
            ticks = 0
        }
        scheduleTick()
    }
}

/// An evaluation that could not run as asked.
struct EvalError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
