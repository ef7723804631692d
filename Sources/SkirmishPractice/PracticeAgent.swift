import NIOCore
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire
import Synchronization

/// The practice opponent as an ``SkirmishSwarm/Agent``: the swarm's `ai` behaviour (the predicting AI of
/// `SkirmishOpponent`) plus what the lobby needs to hear — when it was seated, when its match started, how it ended —
/// and a limit on how long it waits for a person to join its table.
///
/// It runs on an ``SkirmishSwarm/AgentRunner`` like every other client; the lobby reads it through its
/// ``SeatReport``.
struct PracticeAgent: Agent {
    typealias Connection = SnapConnection

    private var inner: AIPlayer
    private let report: SeatReport
    private let joinTimeout: Duration
    private var joinDeadline: Instant?
    private var ended = false

    init(inner: AIPlayer, report: SeatReport, joinTimeout: Duration) {
        self.inner = inner
        self.report = report
        self.joinTimeout = joinTimeout
    }

    var isMatchOver: Bool { ended || inner.isMatchOver }

    var nextWake: Instant? {
        guard !isMatchOver else { return nil }
        switch (inner.nextWake, joinDeadline) {
        case (let wake?, let join?): return min(wake, join)
        case (let wake, let join): return wake ?? join
        }
    }

    mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        joinDeadline = context.now + joinTimeout
        inner.established(welcome, context: &context)
        report.seated(welcome)
    }

    mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        inner.received(message, context: &context)
        switch message {
        case .tableSnapshot(let snapshot):
            report.snapshot(snapshot)
            if snapshot.phase != .waiting, joinDeadline != nil {
                joinDeadline = nil
                report.started()
            }
        case .puckMatchOver(let over):
            end("the match is over (\(over.myScore)–\(over.theirScore))")
        default:
            break
        }
    }

    mutating func wake(context: inout AgentContext<SnapConnection>) {
        if let join = joinDeadline, context.now >= join {
            return end("nobody joined its table within \(joinTimeout.components.seconds) s")
        }
        let before = context.sentCount
        inner.wake(context: &context)
        report.sent(inputs: context.sentCount - before)
    }

    mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<SnapConnection>) {
        end(reason.detail, kind: reason.kind)
    }

    private mutating func end(_ reason: String, kind: String? = nil) {
        guard !ended else { return }
        ended = true
        report.ended(reason, kind: kind)
    }
}

/// What a practice opponent tells the lobby, from its loop to any thread.
final class SeatReport: Sendable {
    let seatedPromise: EventLoopPromise<Welcome>
    let startedPromise: EventLoopPromise<Void>
    let endedPromise: EventLoopPromise<String>
    private let state = Mutex(State())

    private struct State {
        var lastSnapshot: TableSnapshot?
        var inputsSent = 0
        var over = false
    }

    init(loop: any EventLoop) {
        seatedPromise = loop.makePromise()
        startedPromise = loop.makePromise()
        endedPromise = loop.makePromise()
    }

    var lastSnapshot: TableSnapshot? { state.withLock { $0.lastSnapshot } }
    var inputsSent: Int { state.withLock { $0.inputsSent } }

    func seated(_ welcome: Welcome) { seatedPromise.succeed(welcome) }
    func started() { startedPromise.succeed(()) }
    func snapshot(_ snapshot: TableSnapshot) { state.withLock { $0.lastSnapshot = snapshot } }
    func sent(inputs: Int) { state.withLock { $0.inputsSent += inputs } }

    /// The opponent stopped: every promise still open resolves (the unfinished ones fail with the reason, and the
    /// close's `kind` when the connection ended it).
    func ended(_ reason: String, kind: String? = nil) {
        let first = state.withLock { state -> Bool in
            defer { state.over = true }
            return !state.over
        }
        guard first else { return }
        seatedPromise.fail(Unseated(description: reason, kind: kind))
        startedPromise.fail(Unseated(description: reason, kind: kind))
        endedPromise.succeed(reason)
    }
}

/// Why an opponent left before it was seated or before play: the reason, and the kind of close when the connection
/// ended it (`handshake_timeout`, `transport`, …).
struct Unseated: Error, CustomStringConvertible {
    var description: String
    var kind: String?

    /// A handshake that timed out or a connection that failed: worth another try, unlike a server's refusal.
    var isRetryable: Bool { kind == "handshake_timeout" || kind == "transport" }
}
