import SkirmishGames
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire

/// A scripted Puck player: `chaser` goes for the puck, `defender` guards its goal, `idle` holds still.
///
/// Inputs leave on a schedule fixed when the seat is granted (``InputSchedule``), so a stalled loop shows as tick
/// lateness instead of silently sending fewer inputs. Every snapshot goes through the shared ``PuckMonitor`` checks
/// (desyncs, mispredictions against the replica's prediction, snapshot age). The aim itself is ``PuckStyle/aim``.
package struct PuckPlayer: Agent {
    package typealias Connection = SnapConnection

    package typealias Style = PuckStyle

    private let style: Style
    private var schedule: InputSchedule
    private var monitor = PuckMonitor()
    /// Offsets this bot's wind-up rhythm so two bots at one table do not move in lockstep.
    private let phase: Int
    /// The target sent last, from which the defender moves at a human pace; reset for each match.
    private var previous: PuckTarget?

    package init(context: inout AgentContext<SnapConnection>, style: Style, inputRate: Double) {
        self.style = style
        phase = Int.random(in: 0..<24, using: &context.random)
        schedule = InputSchedule(rate: inputRate, random: &context.random)
    }

    package var isMatchOver: Bool { monitor.isMatchOver }

    package var nextWake: Instant? {
        guard style != .idle, !isMatchOver else { return nil }
        return schedule.next
    }

    package mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        monitor.connected(seat: Int(welcome.seat))
        previous = nil
        schedule.begin(at: now)
    }

    package mutating func resumed(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        schedule.skip(until: now)
    }

    package mutating func wake(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        guard style != .idle, !isMatchOver else { return }
        schedule.catchUp(now: now, meters: context.meters)
        let puck = monitor.predictedPuck(ticks: 2)
        let rhythm = Style.rhythm(offset: phase, seat: monitor.replica.seat)
        let target = style.aim(puck: puck, inputStep: schedule.step, phase: rhythm, previous: previous)
        previous = target
        let input = PaddleState(inputStep: schedule.step, x: target.x, y: target.y, vx: 0, vy: 0)
        monitor.sent(input)
        context.send(.paddleState(input))
    }

    package mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        var predicted: TableSnapshot.Puck?
        if case .tableSnapshot(let snapshot) = message { predicted = monitor.replicaPrediction(for: snapshot) }
        monitor.received(message, at: now, context: &context, predicted: predicted)
    }
}
