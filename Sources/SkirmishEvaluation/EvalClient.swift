import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishSwarm
import SkirmishWire
import Synchronization

/// One player of an evaluation: a ``SkirmishOpponent/PuckAgent`` as an ``SkirmishSwarm/Agent`` on the swarm's
/// runtime (UDP on loopback, through the persona's emulated link), acting once per server tick on deadlines fixed in
/// advance; the runtime pings it every 200 ms and each new round trip reaches the agent once.
///
/// What it measures lives in its ``EvalRecord``, which the evaluation reads from its own task. The decision time of
/// every `act` is timed here, outside the agent, which never reads a clock.
package struct EvalAgent<Inner: PuckAgent>: Agent {
    package typealias Connection = SnapConnection

    private let record: EvalRecord
    private let acts: Bool
    private let makeInner: @Sendable (Int) -> Inner
    private let progress: EvalProgress?
    private var inner: Inner?
    /// Ticks at t₀ + k/60 from the Welcome; a stalled loop re-anchors instead of firing a burst of catch-up ticks.
    private var tickStart = Instant.distantFuture
    private var ticks: Int64 = 0
    private var dueTick: Instant { tickStart.advanced(byNanoseconds: ticks * 1_000_000_000 / 60) }
    private var heardSamples = 0

    package init(record: EvalRecord, acts: Bool, progress: EvalProgress?, makeInner: @escaping @Sendable (Int) -> Inner)
    {
        self.record = record
        self.acts = acts
        self.progress = progress
        self.makeInner = makeInner
    }

    package var isMatchOver: Bool { record.isDone }

    package var nextWake: Instant? { acts && inner != nil && !record.isDone ? dueTick : nil }

    package mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        inner = makeInner(Int(welcome.seat))
        tickStart = context.now
        ticks = 1
        record.seated(welcome)
    }

    package mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<SnapConnection>) {
        record.finish(reason.detail)
    }

    package mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        switch message {
        case .tableSnapshot(let snapshot):
            let time = context.now
            record.update { result in
                if result.probe != nil, let opponent = inner as? Opponent {
                    result.probe!.snapshot(snapshot, opponent: opponent)
                }
                if snapshot.phase != .waiting {
                    result.myScore = snapshot.myScore
                    result.theirScore = snapshot.theirScore
                }
            }
            inner?.observe(snapshot, at: time)
            if let adaptive = inner as? AdaptiveOpponent {
                record.update { $0.controller = adaptive.controller }
            }
        case .chat(let chat):
            let (completed, complete) = record.update { result -> (Int, Bool) in
                guard result.probe != nil else { return (0, false) }
                let before = result.probe!.completedShots
                result.probe!.chat(chat.text)
                return (result.probe!.completedShots - before, result.probe!.isComplete)
            }
            progress?.add(.shots, completed)
            if complete { record.finish("done") }
        case .puckMatchOver(let over):
            record.update { result in
                result.over = over
                result.myScore = over.myScore
                result.theirScore = over.theirScore
            }
            record.finish("over")
        case .otherClientQuit, .serverQuit:
            record.finish("the other player left")
        default:
            break
        }
    }

    package mutating func wake(context: inout AgentContext<SnapConnection>) {
        guard inner != nil, !record.isDone else { return }
        let now = context.now
        let late = Double(now.nanoseconds(since: dueTick))
        ticks += 1
        if now.nanoseconds(since: dueTick) > 50_000_000 {
            tickStart = now
            ticks = 1
        }
        if context.roundTrip.samples > heardSamples {
            heardSamples = context.roundTrip.samples
            inner!.observeRoundTrip(Duration(seconds: context.roundTrip.latest), at: now)
        }
        let started = ContinuousClock.now
        let input = inner!.act(now: now)
        let took = ContinuousClock.now - started
        record.update { result in
            result.lateNanos.add(late)
            result.decisionNanos.add(Double(took.nanoseconds))
        }
        if let input { context.send(.paddleState(input)) }
    }
}

/// What one evaluation player measured, shared between its agent (on the runner's loop) and the evaluation.
package final class EvalRecord: Sendable {
    /// What the client saw of its match.
    package struct Result: Sendable {
        var seat: Int?
        var myScore: UInt8 = 0
        var theirScore: UInt8 = 0
        var over: PuckMatchOver?
        var ended: String?
        var decisionNanos = Samples()
        /// How late each tick ran after its due time, in nanoseconds: the loop's own delay, which adds to the emulated
        /// latency and says whether the machine kept up.
        var lateNanos = Samples()
        var probe: OpponentProbe?
        /// An adaptive AI's controller as of its latest snapshot.
        var controller: AdaptiveDifficulty?
    }

    package let welcomed: EventLoopPromise<Welcome>
    package let finished: EventLoopPromise<Void>
    private let state: Mutex<Result>
    private let done = Atomic<Bool>(false)

    package init(probe: OpponentProbe?) {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        welcomed = loop.makePromise()
        finished = loop.makePromise()
        state = Mutex(Result(probe: probe))
    }

    package var isDone: Bool { done.load(ordering: .acquiring) }
    package var result: Result { state.withLock { $0 } }

    package func update<T>(_ body: (inout Result) -> T) -> T { state.withLock { body(&$0) } }

    package func seated(_ welcome: Welcome) {
        state.withLock { $0.seat = Int(welcome.seat) }
        welcomed.succeed(welcome)
    }

    /// Ends the record once: later reasons are ignored.
    package func finish(_ reason: String) {
        guard done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        let seated = state.withLock { result -> Bool in
            result.ended = reason
            return result.seat != nil
        }
        if !seated { welcomed.fail(EvalError("it ended before it was seated (\(reason))")) }
        finished.succeed()
    }
}

/// An evaluation player seen from async code.
package struct ClientHandle: Sendable {
    package let record: EvalRecord
    package let runner: AgentRunner
    package let player: AgentRunner.Player

    package func welcome(role: String) async throws -> Welcome {
        do {
            return try await record.welcomed.futureResult.get()
        } catch {
            throw EvalError("\(role) was not seated: \(error)")
        }
    }

    /// Waits until the player finishes (its shots are done, its match is over, its connection ended) or `deadline`,
    /// then stops it and returns what it measured.
    package func run(until deadline: NIODeadline) async throws -> EvalRecord.Result {
        let record = self.record
        let timer = MultiThreadedEventLoopGroup.singleton.next().scheduleTask(deadline: deadline) {
            record.finish("time limit")
        }
        try await record.finished.futureResult.get()
        timer.cancel()
        return await stop()
    }

    package func stop() async -> EvalRecord.Result {
        record.finish("stopped")
        await runner.stop(player)
        return record.result
    }
}

/// An evaluation that could not run as asked.
package struct EvalError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
