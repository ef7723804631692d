import ArgumentParser

/// The `--seed` options: a whole number from 0 to 2⁶⁴−1, taken whatever it looks like (`--seed -1` is a negative
/// seed to refuse with a reason, not a missing value followed by an unknown flag).
enum Seed {
    /// The seed in `text`, or why it is none; argument-parser names the option before the reason.
    @Sendable
    static func parse(_ text: String) throws -> UInt64 {
        guard let seed = UInt64(text) else {
            throw ValidationError(
                "a seed is a whole number from 0 to \(UInt64.max) (the same seed replays the same run)")
        }
        return seed
    }
}
