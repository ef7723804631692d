import SkirmishGames
import SkirmishWire

/// Sets an opponent's skill within a match so that the match stays close, from the score and the shots each side
/// saves.
///
/// A value-type controller that reads no clock and does no IO: feed it every snapshot the opponent receives
/// (``observe(_:at:)``, in the opponent's frame) and give the opponent ``OpponentConfiguration/init(skill:)`` of
/// ``skill`` whenever it changes (``AdaptiveOpponent`` does both).
///
/// It moves the skill by steps, up when the other player gains and down when the opponent does:
/// - a **goal** is the strong signal: conceded, the skill goes up by the step of that goal; scored, it goes down;
/// - a **save** is the weak one: a shot on target (the puck entering the last ``mouthDepth`` px before a goal,
///   inside the goal mouth, moving at it) that leaves again without a goal says the shooter is pressing; until the
///   skill has settled it moves the skill a quarter of the current goal step, toward the shooter.
///
/// The steps shrink with the goals of the match (``Tuning/goalSteps``, then ``Tuning/lateGoalStep``): the first
/// goals find the level quickly, the later ones only correct it, so the opponent settles within the first
/// ``settlingGoals`` goals instead of chasing every goal. *Converged* has a precise meaning (``Convergence``): the
/// skill once the third goal has been observed lies within ``Convergence/tolerance`` of the time-weighted mean
/// skill over the rest of the match. How it works and how it measures up: <doc:AdaptiveDifficulty>.
public struct AdaptiveDifficulty: Sendable, Hashable {
    /// The step sizes and where a match starts.
    public struct Tuning: Sendable, Hashable {
        /// The skill a match starts at: 0.25, between easy and medium, near the middle of the levels the human-like
        /// players are met at over the real protocol (see <doc:AdaptiveDifficulty>).
        public var startingSkill: Double
        /// The step of the first goals of a match, in order; later goals step by ``lateGoalStep``.
        public var goalSteps: [Double]
        /// The step of every goal after ``goalSteps``.
        public var lateGoalStep: Double
        /// A save's step as a fraction of the step the next goal would take. Saves count only while ``goalSteps``
        /// last: they help find the level, and once it is found, tens of saves in a long match would drift it.
        public var saveWeight: Double

        /// The tuning ``AdaptiveDifficulty`` uses unless told otherwise.
        public init(
            startingSkill: Double = 0.25, goalSteps: [Double] = [0.3, 0.25, 0.15], lateGoalStep: Double = 0.03,
            saveWeight: Double = 0.25
        ) {
            self.startingSkill = startingSkill
            self.goalSteps = goalSteps
            self.lateGoalStep = lateGoalStep
            self.saveWeight = saveWeight
        }
    }

    /// Whether the skill settled: its value once ``AdaptiveDifficulty/settlingGoals`` goals were observed against
    /// its time-weighted mean over the rest of the match.
    public struct Convergence: Sendable, Hashable {
        /// How far the mean may lie from the settled skill for the match to count as converged.
        public static let tolerance = 0.1

        /// The skill right after the third goal (its step included).
        public var settledSkill: Double
        /// The time-weighted mean skill from the third goal to the last snapshot observed.
        public var meanAfter: Double
        /// Seconds of play the mean covers.
        public var seconds: Double

        /// Whether ``meanAfter`` lies within ``tolerance`` of ``settledSkill``.
        public var converged: Bool { abs(meanAfter - settledSkill) <= Self.tolerance }
    }

    /// Goals after which the skill should have settled.
    public static let settlingGoals = 3
    /// Depth of the band before each goal line where a puck coming at the goal is a shot on target, px.
    public static let mouthDepth: Float = 80

    /// The tuning this controller steps by.
    public let tuning: Tuning
    /// The skill the opponent should play at now, 0…1 (``OpponentConfiguration/init(skill:)``).
    public private(set) var skill: Double
    /// Goals observed in the current match, both ways.
    public private(set) var goals = 0
    /// Shots on target the opponent saved in the current match.
    public private(set) var savesByOpponent = 0
    /// Shots on target the other player saved in the current match.
    public private(set) var savesByPlayer = 0

    private struct Score: Sendable, Hashable {
        var mine: UInt8
        var theirs: UInt8
    }
    private var score: Score?
    /// The newest snapshot observed: older ones arriving after it are ignored.
    private var latest: TableSnapshot?
    /// A snapshot this many ticks (10 s) before the newest is not a late one but a new match's.
    static let newMatchTicks: UInt32 = 600
    /// Which goal mouth a shot on target is in now: the opponent's own (`true`), the other player's (`false`).
    private var shotAt: Bool?
    private var settled: Double?
    private var settledSum = 0.0
    private var settledSeconds = 0.0
    private var lastTime: Double?

    /// A controller at `tuning`'s starting skill.
    public init(tuning: Tuning = Tuning()) {
        self.tuning = tuning
        skill = min(max(tuning.startingSkill, 0), 1)
    }

    /// Whether the skill settled in this match; `nil` until ``settlingGoals`` goals were observed and play went on.
    public var convergence: Convergence? {
        guard let settled, settledSeconds > 0 else { return nil }
        return Convergence(settledSkill: settled, meanAfter: settledSum / settledSeconds, seconds: settledSeconds)
    }

    /// The step the next goal takes.
    public var goalStep: Double {
        goals < tuning.goalSteps.count ? tuning.goalSteps[goals] : tuning.lateGoalStep
    }

    /// A snapshot the opponent received at `time`, in the opponent's frame (`myScore` is the opponent's). Returns the
    /// new skill when it changed, `nil` otherwise.
    ///
    /// A snapshot no newer than one already observed (late, reordered or a duplicate) changes nothing: its score and
    /// its puck are the past. One from much earlier in ticks (``newMatchTicks``), or one waiting for players, starts
    /// a new match: the skill is kept, the goal count and the convergence figures start over.
    @discardableResult
    public mutating func observe(_ snapshot: TableSnapshot, at time: Instant) -> Double? {
        let time = time.seconds
        if settled != nil, let lastTime, time > lastTime {
            settledSum += skill * (time - lastTime)
            settledSeconds += time - lastTime
        }
        lastTime = max(time, lastTime ?? time)
        guard snapshot.phase != .waiting else {
            if score != nil { startMatch() }
            latest = snapshot
            return nil
        }
        if let latest, !Opponent.newer(snapshot, than: latest) {
            guard latest.tick &- snapshot.tick > Self.newMatchTicks else { return nil }
            startMatch()
        }
        latest = snapshot
        let before = skill
        let now = Score(mine: snapshot.myScore, theirs: snapshot.theirScore)
        if let score, now.mine < score.mine || now.theirs < score.theirs {
            startMatch()
        }
        var current = score ?? Score(mine: 0, theirs: 0)
        if now.mine > current.mine || now.theirs > current.theirs {
            // Goals first: a shot that went in is no save. One at a time, each seeing the score it made.
            shotAt = nil
            while current.theirs < now.theirs {
                current.theirs += 1
                score = current
                goal(conceded: true)
            }
            while current.mine < now.mine {
                current.mine += 1
                score = current
                goal(conceded: false)
            }
        }
        score = now
        if snapshot.phase == .playing { watchShots(snapshot.puck) }
        return skill != before ? skill : nil
    }

    private mutating func goal(conceded: Bool) {
        step(conceded ? goalStep : -goalStep)
        goals += 1
        if goals == Self.settlingGoals {
            settled = skill
            settledSum = 0
            settledSeconds = 0
        }
    }

    /// Follows the puck through both goal mouths: a shot that enters one and leaves it without a goal is a save.
    private mutating func watchShots(_ puck: TableSnapshot.Puck) {
        let inMouth = PuckConstants.goalMouth.contains(puck.x)
        let atMine = inMouth && puck.y > PuckConstants.height - Self.mouthDepth && puck.vy > 0
        let atTheirs = inMouth && puck.y < Self.mouthDepth && puck.vy < 0
        let now: Bool? = atMine ? true : atTheirs ? false : nil
        if let shot = shotAt, now != shot {
            // Saved: the shooter pressed, so the skill moves toward the shooter (while the level is being found).
            let size = goals < tuning.goalSteps.count ? goalStep * tuning.saveWeight : 0
            if shot {
                savesByOpponent += 1
                step(size)
            } else {
                savesByPlayer += 1
                step(-size)
            }
        }
        shotAt = now
    }

    private mutating func step(_ delta: Double) {
        skill = min(max(skill + delta, 0), 1)
    }

    private mutating func startMatch() {
        score = nil
        goals = 0
        savesByOpponent = 0
        savesByPlayer = 0
        shotAt = nil
        settled = nil
        settledSum = 0
        settledSeconds = 0
    }
}
