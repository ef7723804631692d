/// Comparison of 32-bit packet numbers with serial-number arithmetic (RFC 1982).
///
/// Packet numbers wrap from `UInt32.max` to 0, so plain `<` calls a fresh packet stale right after the wrap. Under
/// RFC 1982, `a` precedes `b` when `b` is ahead of `a` by less than half the number space. Numbers exactly half the
/// space apart are incomparable; both `precedes` and `follows` answer `false` for them.
public enum SerialNumber {
    /// Whether `a` comes before `b`.
    @inlinable
    public static func precedes(_ a: UInt32, _ b: UInt32) -> Bool {
        let distance = b &- a
        return distance != 0 && distance < 0x8000_0000
    }

    /// Whether `a` comes after `b`.
    @inlinable
    public static func follows(_ a: UInt32, _ b: UInt32) -> Bool {
        precedes(b, a)
    }

    /// The signed distance from `a` forward to `b`: positive when `b` is newer.
    @inlinable
    public static func distance(from a: UInt32, to b: UInt32) -> Int32 {
        Int32(bitPattern: b &- a)
    }
}
