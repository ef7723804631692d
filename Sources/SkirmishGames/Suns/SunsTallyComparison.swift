import SkirmishWire

/// How the server compares the two clients' `SunsTally` messages: its only Suns logic.
public enum SunsTallyComparison {
    /// Whether two tallies agree: the same suns, owners and capture times (bit for bit; capture times travel as
    /// exact `f32` in `SunsCapture`, so correct clients always agree).
    public static func agree(_ a: SunsTally, _ b: SunsTally) -> Bool {
        guard a.entries.count == b.entries.count else { return false }
        for (x, y) in zip(a.entries, b.entries) where x.owner != y.owner || x.time.bitPattern != y.time.bitPattern {
            return false
        }
        return true
    }
}
