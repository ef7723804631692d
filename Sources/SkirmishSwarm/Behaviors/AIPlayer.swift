import SkirmishGames
import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// The `ai` behaviour: the SkirmishOpponent AI playing Puck through the bot's session at the persona's `difficulty`
/// (a preset, or `adaptive`: ``SkirmishOpponent/AdaptiveOpponent``).
///
/// The opponent decides on the persona's input schedule (60 Hz plays best: `input_rate: 60hz`; fewer inputs are
/// fine, the speed cap scales with the time between them). It hears every snapshot at its receive time and the
/// bot's round-trip estimate as it changes. The shared ``PuckMonitor`` checks every snapshot, judging the
/// opponent's *own* prediction of the puck for that tick — made from its previous snapshot, its sent inputs and the
/// other paddle dead-reckoned — so `skirmish_prediction_error_pixels` and `skirmish_mispredictions_total` say how
/// well the AI foresaw the table.
package typealias AIPlayer = PuckAgentPlayer<AIOpponent>

/// The `human` behaviour: SkirmishOpponent's human-like player (``SkirmishOpponent/HumanPlayer``) at the persona's
/// `skill`, seeing the table through its reaction delay and moving its hand within a person's limits. Its
/// predictions are the replica's, as for the scripted players.
package typealias HumanLikePlayer = PuckAgentPlayer<HumanPlayer>

extension PuckAgentPlayer where Inner == AIOpponent {
    package init(context: inout AgentContext<SnapConnection>, difficulty: Opponent.Level, inputRate: Double) {
        self.init(context: &context, inputRate: inputRate, predicts: true) { seat, seed in
            AIOpponent(seat: seat, level: difficulty, seed: seed)
        }
    }
}

/// The `ai` behaviour's player: an ``SkirmishOpponent/Opponent`` at a preset, or one an
/// ``SkirmishOpponent/AdaptiveDifficulty`` steers.
///
/// One type for both, so the behaviour registers once; each call goes to the one that is set, mutated in place.
package struct AIOpponent: PuckAgent {
    private var fixed: Opponent?
    private var adaptive: AdaptiveOpponent?

    /// The opponent of `level` for `seat`; `seed` makes its aim noise reproducible.
    package init(seat: Int, level: Opponent.Level, seed: UInt64) {
        if let preset = level.preset {
            fixed = Opponent(seat: seat, configuration: OpponentConfiguration(difficulty: preset), seed: seed)
        } else {
            adaptive = AdaptiveOpponent(seat: seat, seed: seed)
        }
    }

    package mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {
        if fixed != nil { fixed!.observe(snapshot, at: time) }
        if adaptive != nil { adaptive!.observe(snapshot, at: time) }
    }

    package mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {
        if fixed != nil { fixed!.observeRoundTrip(roundTrip, at: time) }
        if adaptive != nil { adaptive!.observeRoundTrip(roundTrip, at: time) }
    }

    package mutating func act(now: Instant) -> PaddleState? {
        if fixed != nil { return fixed!.decide(now: now) }
        if adaptive != nil { return adaptive!.decide(now: now) }
        return nil
    }

    package func predictedPuck(atTick tick: UInt32) -> TableSnapshot.Puck? {
        fixed?.predictedPuck(atTick: tick) ?? adaptive?.opponent.predictedPuck(atTick: tick)
    }
}

extension PuckAgentPlayer where Inner == HumanPlayer {
    package init(context: inout AgentContext<SnapConnection>, skill: HumanPlayer.Skill, inputRate: Double) {
        self.init(context: &context, inputRate: inputRate, predicts: false) { _, seed in
            HumanPlayer(skill: skill, seed: seed)
        }
    }
}

/// A SkirmishOpponent player (``SkirmishOpponent/PuckAgent``) as a swarm behaviour: made for its seat when the bot
/// is seated, fed every snapshot at its receive time and the bot's round trip as it changes, asked for an input on
/// the persona's schedule; every snapshot goes through the shared ``PuckMonitor`` checks, judging the player's own
/// prediction of the puck where it has one.
package struct PuckAgentPlayer<Inner: PuckAgent>: Agent {
    package typealias Connection = SnapConnection

    private let make: @Sendable (_ seat: Int, _ seed: UInt64) -> Inner
    /// Whether the player's own prediction is judged (the AI's); otherwise the replica's, as for scripted players.
    private let predicts: Bool
    private let seed: UInt64
    private var inner: Inner?
    private var schedule: InputSchedule
    private var monitor = PuckMonitor()
    private var heardRTT = 0.0

    /// A player made by `make` for its seat, with a seed of the bot's own; `predicts` judges its own prediction of
    /// the puck rather than the replica's.
    package init(
        context: inout AgentContext<SnapConnection>, inputRate: Double, predicts: Bool,
        make: @escaping @Sendable (_ seat: Int, _ seed: UInt64) -> Inner
    ) {
        self.make = make
        self.predicts = predicts
        seed = context.random.next()
        schedule = InputSchedule(rate: inputRate, random: &context.random)
    }

    package var isMatchOver: Bool { monitor.isMatchOver }

    package var nextWake: Instant? { isMatchOver || inner == nil ? nil : schedule.next }

    package mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        inner = make(Int(welcome.seat), seed)
        monitor.connected(seat: Int(welcome.seat))
        schedule.begin(at: now)
    }

    package mutating func resumed(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        schedule.skip(until: now)
    }

    package mutating func wake(context: inout AgentContext<SnapConnection>) {
        let now = context.now
        // Mutated in place (`inner!`): a local copy would copy its buffers on every decision.
        guard !isMatchOver, inner != nil else { return }
        schedule.catchUp(now: now, meters: context.meters)
        if context.smoothedRTT > 0, context.smoothedRTT != heardRTT {
            heardRTT = context.smoothedRTT
            inner!.observeRoundTrip(Duration(seconds: heardRTT), at: now)
        }
        guard let input = inner!.act(now: now) else { return }
        monitor.sent(input)
        context.send(.paddleState(input))
    }

    package mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        let now = context.now
        guard case .tableSnapshot(let snapshot) = message else {
            return monitor.received(message, at: now, context: &context)
        }
        let predicted =
            predicts ? inner?.predictedPuck(atTick: snapshot.tick) : monitor.replicaPrediction(for: snapshot)
        monitor.received(message, at: now, context: &context, predicted: predicted)
        inner?.observe(snapshot, at: now)
    }
}
