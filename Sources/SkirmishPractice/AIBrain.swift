import NIOCore
import SkirmishOpponent
import SkirmishWire

/// The predicting AI of `SkirmishOpponent` behind the ``OpponentBrain`` seam: a fresh ``Opponent`` per match.
struct AIBrain: OpponentBrain {
    private let configuration: OpponentConfiguration
    private var ai: Opponent?

    init(difficulty: Difficulty) {
        configuration = OpponentConfiguration(difficulty: difficulty)
    }

    mutating func welcomed(_ welcome: Welcome, now: NIODeadline) {
        // Seeded by the match, so the aim noise differs from table to table yet replays for a given one.
        ai = Opponent(seat: Int(welcome.seat), configuration: configuration, seed: UInt64(welcome.match))
    }

    mutating func received(_ message: Message, at now: NIODeadline) {
        if case .tableSnapshot(let snapshot) = message { ai?.observe(snapshot, at: Self.seconds(now)) }
    }

    mutating func measured(rtt: TimeAmount, at now: NIODeadline) {
        ai?.observeRoundTrip(Double(rtt.nanoseconds) / 1e9, at: Self.seconds(now))
    }

    mutating func decide(now: NIODeadline) -> PaddleState? {
        ai?.decide(now: Self.seconds(now))
    }

    /// The AI's clock: seconds of the monotonic uptime clock the session stamps receipts with.
    private static func seconds(_ deadline: NIODeadline) -> Double {
        Double(deadline.uptimeNanoseconds) / 1e9
    }
}
