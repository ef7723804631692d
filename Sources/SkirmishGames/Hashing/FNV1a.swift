/// The 32-bit FNV-1a hash over a canonical big-endian serialisation.
///
/// Every state hash in Skirmish is one of these, never Swift's `Hasher` or `hashValue`: those are seeded per
/// process, so two processes (or two runs) would disagree. Integers are fed most significant byte first and a
/// `Float` as its IEEE-754 bit pattern, so the value is the same on every machine. Over inputs of a fixed length,
/// changing any single byte always changes the result (each step `h = (h ^ b) × prime` is a bijection of `h` for a
/// fixed `b`, and injective in `b` for a fixed `h`), which is why a single flipped bit is always detected.
public struct FNV1a: Sendable, Hashable {
    /// The FNV-1a 32-bit offset basis.
    public static let offsetBasis: UInt32 = 2_166_136_261
    /// The FNV-1a 32-bit prime.
    public static let prime: UInt32 = 16_777_619

    /// The hash of everything added so far.
    public private(set) var value: UInt32

    /// A hash of nothing yet: ``value`` is the offset basis.
    public init() {
        value = Self.offsetBasis
    }

    /// Adds one byte.
    public mutating func add(_ v: UInt8) {
        value = (value ^ UInt32(v)) &* Self.prime
    }

    /// Adds two bytes, most significant first.
    public mutating func add(_ v: UInt16) {
        add(UInt8(truncatingIfNeeded: v &>> 8))
        add(UInt8(truncatingIfNeeded: v))
    }

    /// Adds four bytes, most significant first.
    public mutating func add(_ v: UInt32) {
        add(UInt8(truncatingIfNeeded: v &>> 24))
        add(UInt8(truncatingIfNeeded: v &>> 16))
        add(UInt8(truncatingIfNeeded: v &>> 8))
        add(UInt8(truncatingIfNeeded: v))
    }

    /// Adds eight bytes, most significant first.
    public mutating func add(_ v: UInt64) {
        add(UInt32(truncatingIfNeeded: v &>> 32))
        add(UInt32(truncatingIfNeeded: v))
    }

    /// Adds the IEEE-754 bit pattern, so `-0` and `0` (and every NaN payload) hash differently.
    public mutating func add(_ v: Float) {
        add(v.bitPattern)
    }

    /// The hash of `bytes` alone.
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var h = FNV1a()
        for byte in bytes {
            h.add(byte)
        }
        return h.value
    }
}
