import SkirmishWire

/// The state hashes of one client's Suns view: layout and captures, and the combination.
///
/// FNV-1a over: `layout`: u8 sun count (255 before adoption), then each sun's x, y (f32); `captures`: for each
/// sun, for seat 0 then seat 1, u8 present (0/1) and f32 time (0 when absent); `combined`: both, concatenated.
public struct SunsHashes: Sendable, Hashable {
    /// FNV-1a of the adopted layout (sun count, then each sun's x and y).
    public var layout: UInt32
    /// FNV-1a of every seat's capture claims on every sun.
    public var captures: UInt32
    /// FNV-1a of both serialisations concatenated; what two clients' tallies must agree on.
    public var combined: UInt32

    /// Hashes as computed elsewhere, to compare part by part.
    public init(layout: UInt32, captures: UInt32, combined: UInt32) {
        self.layout = layout
        self.captures = captures
        self.combined = combined
    }
}
