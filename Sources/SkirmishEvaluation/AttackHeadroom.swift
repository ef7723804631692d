import Foundation
import SkirmishGames
import SkirmishOpponent
import SkirmishSwarm
import SkirmishWire
import Synchronization

/// How much better the AI's attack could be against one rival at one latency, so a match target that aim cannot
/// reach shows as such instead of as a weak AI.
///
/// It plays lock-step matches of the AI against the rival (``SkirmishOpponent/LockstepTable``: the server's own
/// rules, both players behind the row's simulated link, seeded, no sockets), a new one whenever one ends, for the
/// seconds of play asked for. Whenever the AI begins a strike (at most once every half second), the whole world —
/// table, packets in flight and both players' state — is copied, and in each copy the AI's paddle is driven instead
/// through one of ``candidates`` other strikes: at the puck's free position where the strike's inputs arrive (a
/// one-way trip later) and 3, 6, …, 18 ticks after that, from 24 directions, through the puck or stopping short of it,
/// then home. Each copy plays on for ``window`` ticks against the real rival. A *moment* counts as **open** when at
/// least one strike scored there; the AI's own continuation is played the same way. This is a lower bound on what aim
/// could do (single strikes, from the paddle as it is, at the moments the AI chose), not a ceiling; but where not one
/// of them scores — at 0 ms against a goalkeeper that moves at the server's 40 px/tick and sees the table at once — the
/// table and the latency, not the AI, stand in the way.
package struct AttackHeadroom: Sendable {
    /// One rival at one latency.
    package struct Row: Codable, Sendable, Equatable {
        package var latencyMs: Int
        package var rival: String
        /// Moments the AI began a strike.
        package var moments: Int
        /// Moments after which the AI's own play scored within the window.
        package var aiScored: Int
        /// Of those, the moments after which it scored cleanly: the rival never hit the puck in between.
        package var aiScoredClean = 0
        /// Moments at which at least one of the candidate strikes scored.
        package var open: Int
        /// Moments at which at least one of the candidate strikes scored cleanly.
        package var cleanOpen = 0
        /// Candidate strikes played out.
        package var strikes: Int
        /// Candidate strikes that scored.
        package var scoringStrikes: Int
        /// Candidate strikes that scored cleanly.
        package var cleanStrikes = 0
    }

    /// How a copy of the world ended for the AI within the window.
    enum Goal {
        /// The AI scored and the rival's paddle never hit the puck since the moment: aim alone did it.
        case clean
        /// The AI scored after the rival's paddle hit the puck: a deflection or a fumble. In a copy it is found by
        /// playing the rival's exact future, which no aim can plan on.
        case touched
    }

    /// Candidate strikes per moment: 7 lead times × 24 directions × 2 reaches.
    package static let candidates = 7 * 24 * 2
    /// Ticks a strike is followed for (2.5 s): long enough for any shot to arrive.
    package static let window = 150
    /// Ticks between two moments (0.5 s): one per attack.
    static let spacing = 30

    let seconds: Int
    let seed: UInt64
    /// The AI under test; its no-prediction rival is the same with prediction off, as in the matches.
    let configuration: OpponentConfiguration

    /// A measurement of `seconds` of lock-step play per row of the AI with `configuration`, seeded by `seed`.
    package init(
        seconds: Int, seed: UInt64, configuration: OpponentConfiguration = OpponentConfiguration(difficulty: .expert)
    ) {
        self.seconds = seconds
        self.seed = seed
        self.configuration = configuration
    }

    /// The row for `rival` at `latencyMilliseconds` one way (±20 % jitter, at least 1 ms, 2 % loss, as the real
    /// evaluation's links); it stops early, with what it has, once `cancelled` says so. `eachSecond` is called after
    /// every second of play.
    package func measure(
        rival: EvalRunner.Rival, latencyMilliseconds: Int, cancelled: () -> Bool = { false },
        eachSecond: () -> Void = {}
    ) -> Row {
        let latency = Double(latencyMilliseconds) / 1000
        let link = LockstepTable<Striker, Rival>.Link(latency: latency, jitter: max(0.001, latency / 5), loss: 0.02)
        var matches = 0
        func newMatch() -> LockstepTable<Striker, Rival> {
            let matchSeed = seed &+ UInt64(latencyMilliseconds) &* 7919 &+ UInt64(matches) &* 104_729
            matches += 1
            return LockstepTable(
                bottom: Striker.ai(Opponent(seat: 0, configuration: configuration, seed: matchSeed)),
                top: Rival(rival, configuration: configuration, seed: matchSeed), bottomLink: link, topLink: link,
                seed: matchSeed)
        }
        var table = newMatch()
        var row = Row(
            latencyMs: latencyMilliseconds, rival: rival.rawValue, moments: 0, aiScored: 0, open: 0, strikes: 0,
            scoringStrikes: 0)
        var previous = Plan.Mode.waiting
        var quiet = 0
        var played = 0
        let arrival = Int((latency * Double(PuckConstants.tickRate)).rounded())
        while played < PuckConstants.tickRate * seconds, !cancelled() {
            if table.match.phase == .over { table = newMatch() }
            table.step()
            played += 1
            if played % PuckConstants.tickRate == 0 { eachSecond() }
            guard case .ai(let opponent) = table.bottom else { break }
            let mode = opponent.plan.mode
            defer { previous = mode }
            quiet -= 1
            let begins =
                (mode == .striking || mode == .intercepting) && previous != .striking
                && previous != .intercepting
            guard begins, quiet <= 0, table.match.phase == .playing else { continue }
            quiet = Self.spacing
            row.moments += 1
            if let goal = Self.goal(table) {
                row.aiScored += 1
                if goal == .clean { row.aiScoredClean += 1 }
            }
            var scoring = 0
            var clean = 0
            for drive in Self.drives(for: table.match.puck, after: arrival) {
                var copy = table
                copy.bottom = .drive(Drive(step: opponent.lastInputStep, target: drive.target, ticks: drive.ticks))
                guard let goal = Self.goal(copy) else { continue }
                scoring += 1
                if goal == .clean { clean += 1 }
            }
            row.strikes += Self.candidates
            row.scoringStrikes += scoring
            row.cleanStrikes += clean
            if scoring > 0 { row.open += 1 }
            if clean > 0 { row.cleanOpen += 1 }
        }
        return row
    }

    /// Every rival at every latency in `latencies`, on threads of its own (one a core, never the cooperative pool's:
    /// this is minutes of CPU work); cancelling the task stops them at the next moment, with the rows so far.
    /// `eachSecond` is called, from those threads, after every second of play of any row.
    package func measureAll(latencies: [Int], eachSecond: @escaping @Sendable () -> Void = {}) async -> [Row] {
        let cells = latencies.flatMap { latency in EvalRunner.Rival.scripted.map { (latency, $0) } }
        let work = Work(count: cells.count)
        let threads = max(1, min(ProcessInfo.processInfo.activeProcessorCount, cells.count))
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<threads {
                    group.addTask {
                        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                            Thread {
                                while let index = work.next() {
                                    let (latency, rival) = cells[index]
                                    let row = measure(
                                        rival: rival, latencyMilliseconds: latency, cancelled: { work.isCancelled },
                                        eachSecond: eachSecond)
                                    work.set(index, row)
                                }
                                done.resume()
                            }.start()
                        }
                    }
                }
            }
        } onCancel: {
            work.cancel()
        }
        return work.rows
    }

    /// How the bottom seat scores within ``window`` ticks, before the rival does; `nil` when it does not. The goal
    /// is clean when the rival's paddle hit the puck at no step since the moment (``PuckEvents/hits``: the rules'
    /// own contact, so a hit both paddles make in one step is the rival's too).
    private static func goal(_ table: LockstepTable<Striker, Rival>) -> Goal? {
        var copy = table
        let before = copy.match.scores
        var touched = false
        for _ in 0..<window {
            let events = copy.step()
            let now = copy.match.scores
            if now != before { return now.0 > before.0 ? (touched ? .touched : .clean) : nil }
            if events.hit(seat: 1) { touched = true }
        }
        return nil
    }

    /// The candidate strikes at `puck` (canonical frame, the AI's own as seat 0) for inputs that reach the server
    /// `after` ticks from now: drive targets and how long to hold each, from sending, before going home.
    static func drives(for puck: TableSnapshot.Puck, after: Int) -> [(target: PuckTarget, ticks: Int)] {
        var drives: [(target: PuckTarget, ticks: Int)] = []
        drives.reserveCapacity(candidates)
        var ahead = puck
        for _ in 0..<after { _ = PuckMatch.advanceFreePuck(&ahead) }
        for step in 0..<7 {
            let lead = after + 3 * step
            if step > 0 {
                for _ in 0..<3 { _ = PuckMatch.advanceFreePuck(&ahead) }
            }
            for direction in 0..<24 {
                let (sine, cosine) = Self.unitCircle[direction]
                for reach: Float in [15, -45] {
                    drives.append(
                        (PuckTarget(x: ahead.x + cosine * reach, y: ahead.y + sine * reach), lead + 6))
                }
            }
        }
        return drives
    }

    /// Sine and cosine every 15° around the circle.
    static let unitCircle: [(Float, Float)] = (0..<24).map { step in
        let angle = Double(step) * Double.pi / 12
        return (Float(sin(angle)), Float(cos(angle)))
    }

    /// The bottom seat (its own frame is the canonical one): the AI as it plays, or a copy's candidate strike.
    enum Striker: PuckAgent {
        case ai(Opponent)
        case drive(Drive)

        mutating func observe(_ snapshot: TableSnapshot, at time: Instant) {
            if case .ai(var opponent) = self {
                opponent.observe(snapshot, at: time)
                self = .ai(opponent)
            }
        }

        mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {
            if case .ai(var opponent) = self {
                opponent.observeRoundTrip(roundTrip, at: time)
                self = .ai(opponent)
            }
        }

        mutating func act(now: Instant) -> PaddleState? {
            switch self {
            case .ai(var opponent):
                let input = opponent.decide(now: now)
                self = .ai(opponent)
                return input
            case .drive(var drive):
                let input = drive.act()
                self = .drive(drive)
                return input
            }
        }
    }

    /// A candidate strike: the paddle sent at one target for a few ticks, then home; its input steps continue the
    /// AI's, so the server takes them.
    struct Drive: Sendable {
        var step: UInt32
        var target: PuckTarget
        var ticks: Int

        mutating func act() -> PaddleState {
            step &+= 1
            ticks -= 1
            let goal = ticks > 0 ? target : PuckTarget(x: PuckShot.keeperSpot.x, y: PuckShot.keeperSpot.y)
            return PaddleState(inputStep: step, x: goal.x, y: goal.y, vx: 0, vy: 0)
        }
    }

    /// The rival, as the real evaluation plays it.
    struct Rival: PuckAgent {
        private var agent: any PuckAgent

        init(_ rival: EvalRunner.Rival, configuration: OpponentConfiguration, seed: UInt64) {
            switch rival {
            case .chaser: agent = ScriptedPuckAgent(style: .chaser, seat: 1, seed: seed)
            case .defender: agent = ScriptedPuckAgent(style: .defender, seat: 1, seed: seed)
            case .noPrediction: agent = Opponent(seat: 1, configuration: configuration.withoutPrediction, seed: seed)
            case .kalman: agent = KalmanGoalie(seat: 1)
            case .beginner, .casual, .skilled: agent = HumanPlayer(skill: rival.skill ?? .casual, seed: seed)
            }
        }

        mutating func observe(_ snapshot: TableSnapshot, at time: Instant) { agent.observe(snapshot, at: time) }
        mutating func observeRoundTrip(_ roundTrip: Duration, at time: Instant) {
            agent.observeRoundTrip(roundTrip, at: time)
        }
        mutating func act(now: Instant) -> PaddleState? { agent.act(now: now) }
    }
}

/// The cells of a concurrent measurement: which is next, the rows done, and whether to stop.
private final class Work: Sendable {
    private let state: Mutex<(next: Int, rows: [AttackHeadroom.Row?], cancelled: Bool)>

    init(count: Int) {
        state = Mutex((0, Array(repeating: nil, count: count), false))
    }

    /// The next cell to measure, or `nil` when none is left or the measurement was cancelled.
    func next() -> Int? {
        state.withLock { state in
            guard !state.cancelled, state.next < state.rows.count else { return nil }
            state.next += 1
            return state.next - 1
        }
    }

    func set(_ index: Int, _ row: AttackHeadroom.Row) {
        state.withLock { $0.rows[index] = row }
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    var rows: [AttackHeadroom.Row] { state.withLock { $0.rows.compactMap { $0 } } }
}
