/// How hard the practice opponent plays (DESIGN §7): reaction delay, speed cap, aim noise and prediction horizon.
public enum Difficulty: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case easy
    case medium
    case hard
    case expert

    public var description: String { rawValue }
}
