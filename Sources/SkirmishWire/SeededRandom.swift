/// A small, fast, seeded random number generator (SplitMix64).
///
/// Every module that needs randomness takes one of these (or any `RandomNumberGenerator`) from its caller, so a
/// run started with `--seed` is reproducible: the deal in Snap, link emulation, bot personas, shot layouts. It lives
/// in the base module so transports, games and bots share one generator rather than three. Not for secrets.
public struct SeededRandom: RandomNumberGenerator, Sendable, Hashable {
    @usableFromInline var state: UInt64

    /// A generator whose whole sequence is fixed by `seed`; the same seed gives the same numbers on every machine.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits of the sequence.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }

    /// An independent generator derived from this one's seed and a stream number (one per bot, per match, …).
    public func derived(_ stream: UInt64) -> SeededRandom {
        var mixer = SeededRandom(seed: state ^ (stream &* 0xD1B5_4A32_D192_ED03))
        return SeededRandom(seed: mixer.next())
    }
}
