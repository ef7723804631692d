import NIOCore
import SkirmishNet
import SkirmishWire

/// One opponent at one table: a ``ClientSession`` to the game server driven by a brain, at 60 inputs a second.
///
/// Loop-confined: created, driven and read only on its event loop; ``OpponentSeat`` is the handle other threads hold.
/// It pings five times a second (the brain hears each round trip), sends the brain's input every tick from the Welcome to
/// the end of the match, gives up when nobody joins its table within `joinTimeout`, and says goodbye when the match is
/// over. Its futures tell the lobby when it was seated, when its match started and when it ended.
final class OpponentClient {
    private var session: ClientSession?
    private var brain: any OpponentBrain
    private let loop: any EventLoop
    private let joinTimeout: TimeAmount
    private var welcome: Welcome?
    private var pings: UInt32 = 0
    private var firstTick = NIODeadline.distantFuture
    private var ticks: Int64 = 0
    private var timer: Scheduled<Void>?
    private var joinTimer: Scheduled<Void>?
    private(set) var lastSnapshot: TableSnapshot?
    private(set) var inputsSent = 0
    private(set) var isOver = false

    let seated: EventLoopPromise<Welcome>
    let started: EventLoopPromise<Void>
    let ended: EventLoopPromise<String>

    private static let tick = TimeAmount.nanoseconds(1_000_000_000 / 60)
    /// Ticks between pings: the AI's estimate of the link wants a sample every `Opponent.pingInterval` (0.2 s).
    private static let pingEvery: Int64 = 12

    init(brain: any OpponentBrain, loop: any EventLoop, joinTimeout: TimeAmount) {
        self.brain = brain
        self.loop = loop
        self.joinTimeout = joinTimeout
        seated = loop.makePromise()
        started = loop.makePromise()
        ended = loop.makePromise()
    }

    /// Opens the session; the outcome arrives through ``seated``.
    func connect(_ configuration: ClientSession.Configuration) {
        var configuration = configuration
        configuration.selfTimed = true
        let session = ClientSession(configuration: configuration, eventLoop: loop) { [weak self] event in
            self?.handle(event)
        }
        self.session = session
        session.connect()
    }

    /// Leaves the table (the match, if running, is forfeited) and ends.
    func stop(reason: String) {
        session?.disconnect(reason: .quit)
        finish(reason)
    }

    private func handle(_ event: SessionEvent) {
        let now = NIODeadline.now()
        switch event {
        case .stateChanged(.connected(let welcome)):
            guard self.welcome == nil else { return }
            self.welcome = welcome
            brain.welcomed(welcome, now: now)
            seated.succeed(welcome)
            firstTick = now
            scheduleTick()
            joinTimer = loop.assumeIsolated().scheduleTask(in: joinTimeout) { [self] in
                if lastSnapshot.map({ $0.phase == .waiting }) ?? true {
                    stop(reason: "nobody joined its table within \(joinTimeout.nanoseconds / 1_000_000_000) s")
                }
            }
        case .stateChanged(.disconnected(let cause)):
            finish("\(cause)")
        case .stateChanged:
            break
        case .rtt(let rtt):
            brain.measured(rtt: rtt, at: now)
        case .message(let message, let receivedAt):
            brain.received(message, at: receivedAt)
            switch message {
            case .tableSnapshot(let snapshot):
                lastSnapshot = snapshot
                if snapshot.phase != .waiting {
                    joinTimer?.cancel()
                    started.succeed(())
                }
            case .puckMatchOver(let over):
                session?.disconnect(reason: .matchOver)
                finish("the match is over (\(over.myScore)–\(over.theirScore))")
            case .serverQuit:
                session?.disconnect(reason: .quit)
                finish("the server is shutting down")
            default:
                break
            }
        }
    }

    /// Inputs leave on a schedule fixed at the Welcome (tick k at t₀ + k/60), so a busy loop skips, never drifts.
    private func scheduleTick() {
        let due = firstTick + .nanoseconds(Self.tick.nanoseconds * ticks)
        timer = loop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            runTick(now: .now())
        }
    }

    private func runTick(now: NIODeadline) {
        guard !isOver, let session, let welcome else { return }
        while firstTick + .nanoseconds(Self.tick.nanoseconds * ticks) <= now { ticks += 1 }
        if let input = brain.decide(now: now) {
            session.send(.paddleState(input))
            inputsSent += 1
        }
        if ticks % Self.pingEvery == 1 {
            pings &+= 1
            let sent = Double(now.uptimeNanoseconds) / 1e9
            session.send(.ping(Ping(player: welcome.peer, count: pings, sendTime: sent)))
        }
        scheduleTick()
    }

    private func finish(_ reason: String) {
        guard !isOver else { return }
        isOver = true
        timer?.cancel()
        joinTimer?.cancel()
        struct Unseated: Error, CustomStringConvertible { var description: String }
        seated.fail(Unseated(description: reason))
        started.fail(Unseated(description: reason))
        ended.succeed(reason)
    }
}
