import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// The `runner` behaviour: runs left and right across the map, jumps and swings on its hook, with seeded randomness.
///
/// A load test wants players that make the server work as people do — characters that move, collide, jump and hook
/// walls and each other, so the server's physics, its snapshot deltas and its network clipping all have something to
/// do — without a map or a path finder. So the runner keeps a direction for a while, presses jump now and then (a
/// press, then a release: the game jumps on the press), and throws its hook up and ahead of itself, holding it for a
/// moment to swing. When its own character makes no headway it jumps, and when that does not help it turns round.
/// Every choice is drawn from the bot's seeded generator, so the same seed replays the same inputs.
///
/// It looks at its controls every `1 / input_rate` (at most once a server tick) and sends an input only when the
/// controls change; the connection repeats the held input every tick. Nothing on that path allocates.
struct Runner: Agent {
    typealias Connection = DDNetConnection

    /// How a run, a jump and a hook are paced.
    struct Pace {
        /// How long a direction is kept.
        var direction: ClosedRange<Duration> = .milliseconds(500) ... .seconds(3)
        /// Time between jump presses.
        var jumpEvery: ClosedRange<Duration> = .milliseconds(400) ... .milliseconds(2_500)
        /// How long jump stays pressed.
        var jumpHold: ClosedRange<Duration> = .milliseconds(40) ... .milliseconds(200)
        /// Time between hooks.
        var hookEvery: ClosedRange<Duration> = .milliseconds(800) ... .seconds(4)
        /// How long a hook is held.
        var hookHold: ClosedRange<Duration> = .milliseconds(200) ... .milliseconds(1_200)
        /// How often progress is checked.
        var progressCheck: Duration = .milliseconds(250)
        /// How far (world units, 32 a tile) the character must have moved since the last check to count as progress.
        var progressDistance = 8
    }

    private let pace: Pace
    /// Time between looks at the controls.
    private let period: Duration
    private var next: Instant?
    private var input = DDNetConnection.Input.neutral

    private var directionUntil = Instant.zero
    private var jumpAt = Instant.zero
    private var jumpReleaseAt: Instant?
    private var hookAt = Instant.zero
    private var hookReleaseAt: Instant?

    /// The bot's own character in the newest snapshot, when it is alive.
    private var position: (x: Int, y: Int)?
    /// Where it was at the last progress check, and since when it has made none.
    private var checkedAt = Instant.zero
    private var checkedX = 0
    private var stuckChecks = 0

    /// A runner that looks at its controls `inputRate` times a second (at most 50, the server's tick rate).
    init(inputRate: Double, pace: Pace = Pace()) {
        self.pace = pace
        let rate = min(max(inputRate, 1), Double(Wire.tickRate))
        period = .nanoseconds(Int64((1e9 / rate).rounded()))
    }

    var nextWake: Instant? { next }

    var isMatchOver: Bool { false }

    mutating func established(_ session: DDNetConnection.Session, context: inout AgentContext<DDNetConnection>) {
        let now = context.now
        directionUntil = now
        jumpAt = now + context.random.duration(in: pace.jumpEvery)
        hookAt = now + context.random.duration(in: pace.hookEvery)
        checkedAt = now
        look(context: &context)
    }

    mutating func received(_ message: DDNetConnection.Message, context: inout AgentContext<DDNetConnection>) {
        guard case .world(let world) = message else { return }
        if let me = world.local {
            position = (me.x, me.y)
        } else {
            position = nil
        }
    }

    mutating func wake(context: inout AgentContext<DDNetConnection>) {
        look(context: &context)
    }

    mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<DDNetConnection>) {
        next = nil
    }

    /// Decides the controls for now, sends them if they changed, and schedules the next look.
    private mutating func look(context: inout AgentContext<DDNetConnection>) {
        let now = context.now
        var controls = input
        if now >= directionUntil {
            // Mostly running, sometimes standing still for a moment.
            let roll = Int.random(in: 0..<20, using: &context.random)
            controls.direction = roll < 9 ? -1 : roll < 18 ? 1 : 0
            directionUntil = now + context.random.duration(in: pace.direction)
        }
        checkProgress(&controls, now: now, random: &context.random)

        if let release = jumpReleaseAt {
            if now >= release {
                controls.jump = false
                jumpReleaseAt = nil
            }
        } else if now >= jumpAt {
            controls.jump = true
            jumpReleaseAt = now + context.random.duration(in: pace.jumpHold)
            jumpAt = now + context.random.duration(in: pace.jumpEvery)
        }

        if let release = hookReleaseAt {
            if now >= release {
                controls.hook = false
                hookReleaseAt = nil
            }
        } else if now >= hookAt {
            // Up and ahead (or up and to a random side when standing): ceilings and walls to swing from.
            let side = controls.direction != 0 ? controls.direction : (Bool.random(using: &context.random) ? 1 : -1)
            controls.targetX = side * Int.random(in: 60...300, using: &context.random)
            controls.targetY = -Int.random(in: 120...360, using: &context.random)
            controls.hook = true
            hookReleaseAt = now + context.random.duration(in: pace.hookHold)
            hookAt = now + context.random.duration(in: pace.hookEvery)
        }
        if !controls.hook && controls.direction != 0 {
            controls.targetX = controls.direction * 100
            controls.targetY = 0
        }

        if controls != input {
            input = controls
            context.send(.input(controls))
        }
        next = now + period
    }

    /// Every ``Pace/progressCheck``: a character that held a direction but moved less than
    /// ``Pace/progressDistance`` jumps; after four such checks in a row (a second) it turns round.
    private mutating func checkProgress(
        _ controls: inout DDNetConnection.Input, now: Instant, random: inout SeededRandom
    ) {
        guard now >= checkedAt + pace.progressCheck else { return }
        checkedAt = now
        guard let position else { return }
        defer { checkedX = position.x }
        guard controls.direction != 0, abs(position.x - checkedX) < pace.progressDistance else {
            stuckChecks = 0
            return
        }
        stuckChecks += 1
        if stuckChecks >= 4 {
            controls.direction = -controls.direction
            directionUntil = now + random.duration(in: pace.direction)
            stuckChecks = 0
        } else if jumpReleaseAt == nil {
            jumpAt = now
        }
    }
}
