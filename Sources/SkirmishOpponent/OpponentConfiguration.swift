/// How an ``Opponent`` plays: how late it sees, how fast it moves, how well it aims and how far it looks ahead.
///
/// Start from a difficulty preset with ``init(difficulty:)`` and change single knobs when measuring one of them; the
/// presets are the ones `skirmish ai-eval` checks for a monotone difficulty curve.
public struct OpponentConfiguration: Sendable, Hashable {
    /// Seconds between a snapshot arriving and the opponent acting on it: a player's reaction time. Not compensated
    /// by prediction — the opponent acts as if it were this much earlier.
    public var reactionDelay: Double
    /// The most its commanded paddle position moves per 60 Hz tick, in px (the server's own limit is 40).
    public var speedCap: Float
    /// Standard deviation of the aim point at the far goal line, in px, drawn once per strike; 0.8 of it also
    /// misplaces each defensive stand sideways.
    public var aimNoise: Float
    /// The most ticks the opponent simulates ahead of its latest snapshot, latency compensation included. A puck
    /// whose crossing lies beyond the horizon is guarded against, not intercepted.
    public var predictionHorizon: Int
    /// Corrections to a plan are blended in over about this many ticks instead of snapping (1 = no blending).
    public var blendTicks: Float
    /// Whether the opponent runs the physics forward at all. `false` is the evaluation baseline: the same planner
    /// acting on the latest snapshot as if it were the present.
    public var predicts: Bool

    /// The preset of `difficulty`.
    public init(difficulty: Opponent.Difficulty = .medium) {
        switch difficulty {
        // Tuned on goals both ways against the human-like players (`skirmish ai-eval --human-matches`, bands in
        // SkirmishEvaluation's article), keeping the expert's save rate and intercept error on served shots.
        case .easy:
            reactionDelay = 0.24
            speedCap = 6.5
            aimNoise = 50
            predictionHorizon = 10
            blendTicks = 4
        case .medium:
            reactionDelay = 0.2
            speedCap = 8
            aimNoise = 44
            predictionHorizon = 16
            blendTicks = 3
        case .hard:
            reactionDelay = 0.16
            speedCap = 9.5
            aimNoise = 39
            predictionHorizon = 24
            blendTicks = 3
        case .expert:
            reactionDelay = 0
            speedCap = 40
            aimNoise = 5
            predictionHorizon = 150
            blendTicks = 1.5
        }
        predicts = true
    }

    /// The same configuration with prediction off: the evaluation's no-prediction baseline.
    public var withoutPrediction: OpponentConfiguration {
        var blind = self
        blind.predicts = false
        return blind
    }
}
