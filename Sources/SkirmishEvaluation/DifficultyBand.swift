import SkirmishOpponent

/// What a difficulty preset should do against one human-like level, in matches to 7 goals: the ranges its win rate
/// and the goals of either side per match must lie in (issue 34's difficulty bands).
///
/// A cell passes when every point estimate it names lies inside its range; the 95 % intervals are printed beside
/// them to say how firmly. Fewer than ``minimumMatches`` matches are too few to judge. The table is ``all``; the
/// module's article lists it in words.
package struct DifficultyBand: Sendable, Hashable {
    package var difficulty: Opponent.Difficulty
    package var level: HumanPlayer.Skill
    /// The AI's win rate (a draw counts half), 0…1; `nil`: not judged.
    package var winRate: ClosedRange<Double>?
    /// The AI's goals per match; `nil`: not judged.
    package var aiGoals: ClosedRange<Double>?
    /// The player's goals per match; `nil`: not judged.
    package var playerGoals: ClosedRange<Double>?

    /// Matches a cell needs before it is judged: with fewer, a win rate's interval spans ±15 points or more.
    package static let minimumMatches = 40

    /// Every band, presets from easy and levels from beginner.
    package static let all: [DifficultyBand] = [
        DifficultyBand(difficulty: .easy, level: .beginner, winRate: 0.25...0.75),
        DifficultyBand(difficulty: .easy, level: .casual, winRate: 0...0.25, aiGoals: 2...5),
        DifficultyBand(difficulty: .easy, level: .skilled, winRate: 0...0.10, aiGoals: 1...4),
        DifficultyBand(difficulty: .medium, level: .beginner, winRate: 0.75...1, playerGoals: 1.5...5),
        DifficultyBand(difficulty: .medium, level: .casual, winRate: 0.25...0.75),
        DifficultyBand(difficulty: .medium, level: .skilled, winRate: 0...0.25, aiGoals: 2...7),
        DifficultyBand(difficulty: .hard, level: .beginner, winRate: 0.90...1),
        DifficultyBand(difficulty: .hard, level: .casual, winRate: 0.75...1, playerGoals: 1...5),
        DifficultyBand(difficulty: .hard, level: .skilled, winRate: 0.25...0.75),
        DifficultyBand(difficulty: .expert, level: .beginner, winRate: 0.95...1),
        DifficultyBand(difficulty: .expert, level: .casual, winRate: 0.90...1),
        DifficultyBand(difficulty: .expert, level: .skilled, winRate: 0.75...1, playerGoals: 1...5),
    ]

    /// The band of `difficulty` against `level`, if the table has one.
    package static func band(_ difficulty: Opponent.Difficulty, _ level: HumanPlayer.Skill) -> DifficultyBand? {
        all.first { $0.difficulty == difficulty && $0.level == level }
    }

    init(
        difficulty: Opponent.Difficulty, level: HumanPlayer.Skill, winRate: ClosedRange<Double>? = nil,
        aiGoals: ClosedRange<Double>? = nil, playerGoals: ClosedRange<Double>? = nil
    ) {
        self.difficulty = difficulty
        self.level = level
        self.winRate = winRate
        self.aiGoals = aiGoals
        self.playerGoals = playerGoals
    }

    /// What the adaptive AI must do against every level: a mean goal difference (AI − player) per match within
    /// ±``adaptiveGoalDifference``, and at least ``adaptiveConvergedShare`` of its matches converged
    /// (``SkirmishOpponent/AdaptiveDifficulty/Convergence``) by the third goal.
    package static let adaptiveGoalDifference = 2.0
    /// The share of matches whose skill must have converged by the third goal.
    package static let adaptiveConvergedShare = 0.8
}
