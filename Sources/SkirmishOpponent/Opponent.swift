import SkirmishGames
import SkirmishWire

/// An AI Puck player that predicts across latency: feed it what the client session receives, send what it decides.
///
/// A value-type state machine that never reads a clock and does no IO. Every call takes the time as an `Instant` on
/// any fixed local clock (an agent's `context.now`); the same calls with the same times give the same decisions.
/// Create one per match once the seat is known (`Welcome.seat`), then:
///
/// - ``observe(_:at:)`` every `TableSnapshot` as it arrives (stale and duplicate ones are ignored);
/// - ``observeRoundTrip(_:at:)`` every Ping→Pong round trip — send a Ping every ``pingInterval``;
/// - ``decide(now:)`` once per server tick (60 Hz), and send the `PaddleState` it returns.
///
/// It never commands a position outside its half and never moves its commanded position faster than
/// ``OpponentConfiguration/speedCap``. How it works and how it is measured: <doc:HowItWorks>.
public struct Opponent: Sendable {
    /// The difficulty presets of ``OpponentConfiguration/init(difficulty:)``, weakest first.
    public enum Difficulty: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case easy, medium, hard, expert

        /// The preset's name as `--difficulty` and scripts write it (`hard`).
        public var description: String { rawValue }
    }

    /// How often to send a Ping so the round-trip estimate stays fresh.
    public static let pingInterval = Duration.milliseconds(200)
    /// The defence line in the opponent's own frame: the puck-centre y at which ``Plan/crossingX`` is predicted and
    /// a shot is blocked — the deepest its paddle goes (its box ends at y = 440), which leaves the most time to get
    /// there across a slow link.
    public static let defenceLine: Float = 440

    /// The seat this opponent plays (its snapshots and inputs are in this seat's frame).
    public let seat: Int
    /// The reaction, aim and speed settings this opponent plays with; ``reconfigure(_:)`` changes them mid-match.
    public internal(set) var configuration: OpponentConfiguration
    /// What the last ``decide(now:)`` planned.
    public private(set) var plan = Plan.initial

    var estimator = LatencyEstimator()
    var snapshots = Ring(capacity: 32, filler: Received.none)
    var inputs = Ring(capacity: 128, filler: SentInput(step: 0, x: 160, y: 400, arrivalTick: .infinity))
    var commanded: Point?
    var smoothed: Point?
    var lastDesired: Point?
    var lastDecision: Double?
    var inputStep: UInt32 = 0
    var random: SeededRandom
    var aimOffset: Float = 0
    /// Where it misjudges its defensive spot this time, in px (x only).
    var positionOffset: Float = 0
    /// Positioning noise as a fraction of ``OpponentConfiguration/aimNoise``.
    static let positionNoise: Float = 0.8
    /// A block or strike in progress: its mode and target, kept until the effect tick passes `until`.
    var hold: (mode: Plan.Mode, target: Point, until: Double)?
    /// Since when a slow puck has sat in the band both paddles reach.
    var contestedSince: Double?
    /// What it has seen of the other player's defence, and so how it rates shots (``RivalRead``).
    package private(set) var rival = RivalRead()
    /// Ticks a strike is held past its planned meeting.
    static let strikeFollowThrough = 4

    /// A new opponent for `seat`; `seed` makes its aim noise reproducible.
    public init(seat: Int, configuration: OpponentConfiguration = OpponentConfiguration(), seed: UInt64 = 1) {
        self.seat = seat == 1 ? 1 : 0
        self.configuration = configuration
        random = SeededRandom(seed: seed)
    }

    /// The link as the opponent estimates it.
    public var latency: LatencyEstimate { estimator.estimate }

    /// The newest snapshot observed.
    public var latestSnapshot: TableSnapshot? { snapshots.newest?.snapshot }

    /// The last input step sent (the first ``decide(now:)`` sends step 1).
    public var lastInputStep: UInt32 { inputStep }

    // MARK: Observing

    /// A `TableSnapshot` from the server, in this seat's frame, received at local time `time`.
    public mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {
        // The arithmetic on time inside is in `Double` seconds.
        let time = time.seconds
        if let newest = snapshots.newest, !Self.newer(snapshot, than: newest.snapshot) { return }
        if snapshot.phase == .playing || snapshot.phase == .goalPause {
            estimator.observeSnapshot(tick: snapshot.tick, at: time)
        }
        snapshots.append(Received(snapshot: snapshot, time: time))
        rival.observe(snapshot)
    }

    /// One measured round trip (Ping sent → Pong received), at local time `time`.
    public mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {
        estimator.observeRoundTrip(roundTrip.seconds, at: time.seconds)
    }

    // MARK: Deciding

    /// Decides where the paddle goes next and returns the input to send now.
    ///
    /// Call it once per server tick; a longer gap is fine (the speed cap scales with the time since the last call,
    /// up to three ticks' worth).
    public mutating func decide(now: Instant) -> PaddleState {
        let now = now.seconds
        let dt = lastDecision.map { Float(min(max((now - $0) * Double(PuckConstants.tickRate), 0), 3)) } ?? 1
        lastDecision = now
        let desired: Point
        let previousMode = plan.mode
        if let view = viewSnapshot(now: now) {
            let puck = PuckMatch.view(x: view.snapshot.puck.x, y: view.snapshot.puck.y, seat: 0)
            let slow = abs(view.snapshot.puck.vx) + abs(view.snapshot.puck.vy) < 3
            if view.snapshot.phase == .playing, slow, puck.y >= Self.reachTop, puck.y < Self.safe {
                if contestedSince == nil { contestedSince = now }
            } else {
                contestedSince = nil
            }
            let contested = contestedSince.map { now - $0 >= Self.contestAfter } ?? false
            let decision = makePlan(from: view.snapshot, now: now, contested: contested)
            plan = decision.plan
            let effect = Double(plan.snapshotTick) + Double(plan.lookahead)
            desired = held(decision.target, blockUntil: decision.blockUntil, effect: effect)
            if commanded == nil {
                let mine = view.snapshot.me
                commanded = Point(x: mine.x, y: mine.y)
            }
        } else {
            plan = Plan.initial
            desired = Point(x: 160, y: 420)
        }
        if plan.mode != previousMode, plan.mode == .intercepting || plan.mode == .striking,
            previousMode != .intercepting, previousMode != .striking
        {
            aimOffset = configuration.aimNoise * Self.normal(using: &random)
        }
        if plan.mode != previousMode, plan.mode == .guarding || plan.mode == .blocking,
            previousMode != .guarding, previousMode != .blocking
        {
            positionOffset = configuration.aimNoise * Self.positionNoise * Self.normal(using: &random)
        }
        smoothed = blend(toward: desired, mode: plan.mode, previousMode: previousMode, dt: dt)
        lastDesired = desired
        var position = commanded ?? Point(x: 160, y: 400)
        let goal = smoothed ?? desired
        let move = (goal - position).clamped(toLength: configuration.speedCap * dt)
        position = (position + move).confined()
        commanded = position
        inputStep &+= 1
        let arrival = estimator.serverTick(at: now).map { $0 + estimator.meanOneWay * Double(PuckConstants.tickRate) }
        inputs.append(SentInput(step: inputStep, x: position.x, y: position.y, arrivalTick: arrival ?? .infinity))
        let perTick = max(dt, 1)
        return PaddleState(
            inputStep: inputStep, x: position.x, y: position.y, vx: move.x / perTick, vy: move.y / perTick)
    }

    /// The target to head for: `target`, or the one a block or strike in progress holds.
    ///
    /// A block stands until the shot would have crossed its line (`blockUntil`), whatever the prediction sees
    /// meanwhile: the error that counts is measured then, and a paddle that leaves early opens the goal to a
    /// deflection. A strike is followed through for a few ticks past its meeting tick even when the prediction
    /// already sees the puck hit: jitter can hold the strike's inputs back, and retreating then loses the hit. A new
    /// strike never cuts a block short; a new block (of a shot) ends a strike.
    private mutating func held(_ target: Point, blockUntil: UInt32?, effect: Double) -> Point {
        if plan.mode == .blocking, let blockUntil {
            hold = (.blocking, target, Double(blockUntil))
            return target
        }
        let blocking = hold.map { $0.mode == .blocking && effect <= $0.until } ?? false
        if plan.mode == .striking, !blocking {
            hold = (.striking, target, effect + Double(driveTicks + Self.strikeFollowThrough))
            return target
        }
        guard let hold, effect <= hold.until, plan.mode != .waiting else {
            self.hold = nil
            return target
        }
        plan.mode = hold.mode
        plan.target = PuckTarget(x: hold.target.x, y: hold.target.y)
        return hold.target
    }

    /// Corrections are blended in over ``OpponentConfiguration/blendTicks``; a new kind of plan (or a jump of more
    /// than 60 px, such as a new shot) is taken at once, and so is every strike, whose timing is everything.
    private func blend(toward desired: Point, mode: Plan.Mode, previousMode: Plan.Mode, dt: Float) -> Point {
        guard let smoothed, let lastDesired, mode == previousMode, mode != .striking, mode != .waiting,
            (desired - lastDesired).length < 60
        else { return desired }
        let gain = min(1, dt / max(configuration.blendTicks, 1))
        return smoothed + (desired - smoothed) * gain
    }

    /// The newest snapshot at least ``OpponentConfiguration/reactionDelay`` old.
    private func viewSnapshot(now: Double) -> Received? {
        let cutoff = now - configuration.reactionDelay
        var index = snapshots.count - 1
        while index >= 0 {
            let received = snapshots[index]
            if received.time <= cutoff { return received }
            index -= 1
        }
        return nil
    }

    /// Whether `a` is newer than `b`: a later tick, or the same tick in a later phase.
    static func newer(_ a: TableSnapshot, than b: TableSnapshot) -> Bool {
        if a.tick != b.tick { return SerialNumber.follows(a.tick, b.tick) }
        return rank(a.phase) > rank(b.phase)
    }

    private static func rank(_ phase: PuckPhase) -> Int {
        switch phase {
        case .waiting: 0
        case .playing, .goalPause: 1
        case .over: 2
        }
    }

    /// An approximately standard normal draw: the sum of twelve uniforms minus six (Irwin–Hall), which needs no
    /// logarithm and stays within ±6.
    static func normal(using random: inout SeededRandom) -> Float {
        var sum: Float = 0
        for _ in 0..<12 { sum += Float.random(in: 0..<1, using: &random) }
        return sum - 6
    }
}

/// A snapshot and its local arrival time.
struct Received: Sendable {
    var snapshot: TableSnapshot
    var time: Double

    static let none = Received(
        snapshot: TableSnapshot(
            tick: 0, lastInputStep: 0, me: .init(x: 160, y: 400, vx: 0, vy: 0),
            them: .init(x: 160, y: 80, vx: 0, vy: 0),
            puck: .init(x: 160, y: 240, vx: 0, vy: 0, angle: 0, spin: 0), myScore: 0, theirScore: 0, phase: .waiting,
            stateHash: 0),
        time: -.infinity)
}

/// An input this opponent sent, with the server tick it is estimated to arrive by.
struct SentInput: Sendable {
    var step: UInt32
    var x: Float
    var y: Float
    var arrivalTick: Double
}
