extension Opponent {
    /// How hard an opponent plays: one of the fixed presets, or adaptive (``AdaptiveDifficulty`` sets its skill
    /// within each match so that the match stays close).
    ///
    /// What `--difficulty`, the practice page and a script's `difficulty:` for the `ai` behaviour accept; the raw
    /// values are the names they take.
    public enum Level: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        case easy, medium, hard, expert
        /// Starts at ``AdaptiveDifficulty/Tuning/startingSkill`` (between easy and medium) and follows the score and the rallies.
        case adaptive

        /// The fixed preset `difficulty`.
        public init(_ difficulty: Difficulty) {
            switch difficulty {
            case .easy: self = .easy
            case .medium: self = .medium
            case .hard: self = .hard
            case .expert: self = .expert
            }
        }

        /// The fixed preset this level plays; `nil` for ``adaptive``.
        public var preset: Difficulty? { Difficulty(rawValue: rawValue) }

        /// The level's name as it is written (`hard`, `adaptive`).
        public var description: String { rawValue }

        /// Every name, separated by commas: for errors that list the choices.
        public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
    }
}
