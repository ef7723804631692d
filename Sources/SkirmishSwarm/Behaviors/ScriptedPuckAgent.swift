import SkirmishGames
import SkirmishOpponent
import SkirmishWire

/// A scripted Puck style as a pure ``SkirmishOpponent/PuckAgent``: the same aim and input rhythm as a swarm bot of
/// that behaviour, without a bot around it. `skirmish ai-eval` and the tests play the AI against it.
package struct ScriptedPuckAgent: PuckAgent {
    package let style: PuckStyle
    private let period: Double
    private let phase: Int
    private var replica: PuckReplica
    private var next = -Double.infinity
    private var inputStep: UInt32 = 0
    private var previous: PuckTarget?

    /// A player of `style` in `seat`, sending `inputRate` inputs a second; `seed` sets its wind-up rhythm.
    package init(style: PuckStyle, seat: Int, inputRate: Double = 30, seed: UInt64) {
        self.style = style
        period = 1 / max(inputRate, 1)
        var random = SeededRandom(seed: seed)
        phase = PuckStyle.rhythm(offset: Int.random(in: 0..<24, using: &random), seat: seat)
        replica = PuckReplica(seat: seat)
    }

    package mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {
        _ = replica.apply(snapshot)
    }

    package mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {}

    package mutating func act(now: Instant) -> PaddleState? {
        guard style != .idle else { return nil }
        // The input rhythm counts in `Double` seconds.
        let now = now.seconds
        if next == -.infinity { next = now }
        guard now >= next else { return nil }
        while next <= now {
            next += period
            inputStep &+= 1
        }
        let puck = replica.latest == nil ? nil : replica.predictPuck(ticks: 2)
        let target = style.aim(puck: puck, inputStep: inputStep, phase: phase, previous: previous)
        previous = target
        return PaddleState(inputStep: inputStep, x: target.x, y: target.y, vx: 0, vy: 0)
    }
}
