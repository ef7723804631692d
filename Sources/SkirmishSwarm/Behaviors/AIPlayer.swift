import SkirmishGames
import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// The `ai` behaviour: the SkirmishOpponent AI playing Puck through the bot's session at the persona's `difficulty`.
///
/// The opponent decides on the persona's input schedule (60 Hz plays best: `input_rate: 60hz`; fewer inputs are
/// fine, the speed cap scales with the time between them). It hears every snapshot at its receive time and the
/// bot's round-trip estimate as it changes. The shared ``PuckMonitor`` checks every snapshot, judging the
/// opponent's *own* prediction of the puck for that tick — made from its previous snapshot, its sent inputs and the
/// other paddle dead-reckoned — so `skirmish_prediction_error_pixels` and `skirmish_mispredictions_total` say how
/// well the AI foresaw the table.
package struct AIPlayer: Agent {
    package typealias Connection = SnapConnection

    private let configuration: OpponentConfiguration
    private let seed: UInt64
    private var opponent: Opponent?
    private var schedule: InputSchedule
    private var monitor = PuckMonitor()
    private var heardRTT = 0.0

    package init(context: inout AgentContext<SnapConnection>, difficulty: Opponent.Difficulty, inputRate: Double) {
        configuration = OpponentConfiguration(difficulty: difficulty)
        seed = context.random.next()
        schedule = InputSchedule(rate: inputRate, random: &context.random)
    }

    package var isMatchOver: Bool { monitor.isMatchOver }

    package var nextWake: Instant? { isMatchOver || opponent == nil ? nil : schedule.next }

    package mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        opponent = Opponent(seat: Int(welcome.seat), configuration: configuration, seed: seed)
        monitor.connected(seat: Int(welcome.seat))
        schedule.begin(at: now)
    }

    package mutating func resumed(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        schedule.skip(until: now)
    }

    package mutating func wake(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        // Mutated in place (`opponent!`): a local copy would copy its buffers on every decision.
        guard !isMatchOver, opponent != nil else { return }
        schedule.catchUp(now: now, meters: context.meters)
        if context.smoothedRTT > 0, context.smoothedRTT != heardRTT {
            heardRTT = context.smoothedRTT
            opponent!.observeRoundTrip(Duration(seconds: heardRTT), at: now)
        }
        let input = opponent!.decide(now: now)
        monitor.sent(input)
        context.send(.paddleState(input))
    }

    package mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        guard case .tableSnapshot(let snapshot) = message else {
            return monitor.received(message, at: now, context: &context)
        }
        monitor.received(message, at: now, context: &context, predicted: opponent?.predictedPuck(atTick: snapshot.tick))
        opponent?.observe(snapshot, at: now)
    }
}
