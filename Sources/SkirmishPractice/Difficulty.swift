import SkirmishOpponent
import SkirmishScript

/// How hard the practice opponent plays: the AI's presets (reaction delay, speed cap, aim noise, prediction horizon).
package typealias Difficulty = Opponent.Difficulty
