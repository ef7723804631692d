import SkirmishNet
import SkirmishSwarm
import SkirmishWire

/// A Count player: on its turn it takes the total to 21 when it can, and otherwise adds 1–3 at random.
///
/// Every state the server announces is checked (`count_step`): the total never falls and grows by 1–3 a turn. The
/// player reports its matches to the runtime and what it saw to a shared ``CountTally``.
struct CountPlayer: Agent {
    typealias Connection = SnapConnection

    private let tally: CountTally
    private var seat = 0
    private var lastTotal: Int?
    private(set) var isMatchOver = false
    var nextWake: Instant? { nil }

    init(tally: CountTally) { self.tally = tally }

    mutating func established(_ welcome: Welcome, context: inout AgentContext<SnapConnection>) {
        seat = Int(welcome.seat)
        tally.add(.seated)
    }

    mutating func wake(context: inout AgentContext<SnapConnection>) {}

    mutating func received(_ message: Message, context: inout AgentContext<SnapConnection>) {
        guard case .game(let payload) = message, let move = CountMessage(payload) else { return }
        switch move {
        case .state(let total, let turn):
            if let lastTotal {
                context.check("count_step", passed: (lastTotal + 1...lastTotal + 3).contains(total))
            } else {
                context.check("count_step", passed: total == 0)
                context.recordMatchStarted()
            }
            lastTotal = total
            guard turn == seat else { return }
            let left = CountRules.goal - total
            let amount = left <= 3 ? left : Int.random(in: 1...3, using: &context.random)
            context.send(CountMessage.add(amount).message)
            tally.add(.moves)
        case .over(let winner, let total):
            context.check("count_final", passed: total == CountRules.goal)
            isMatchOver = true
            context.recordMatchCompleted()
            tally.add(winner == seat ? .won : .lost)
        case .add:
            context.recordError("count_unexpected_add")
        }
    }
}
