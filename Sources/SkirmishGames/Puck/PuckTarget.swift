import SkirmishWire

/// Where a player wants its paddle, in the player's own frame (itself at the bottom).
///
/// Built from `PaddleState.x`/`y`; the packet's velocity is advisory and never used.
public struct PuckTarget: Sendable, Hashable {
    /// Wanted paddle centre x, in pixels (0–320), in the player's own frame.
    public var x: Float
    /// Wanted paddle centre y, in pixels (0–480), in the player's own frame; the match clamps it to the player's half.
    public var y: Float

    /// A target at (`x`, `y`) in the player's own frame.
    public init(x: Float, y: Float) {
        self.x = x
        self.y = y
    }

    /// The target of a `PaddleState`.
    public init(_ state: PaddleState) {
        self.init(x: state.x, y: state.y)
    }

    /// Whether both coordinates are finite; a non-finite target is refused.
    public var isFinite: Bool { x.isFinite && y.isFinite }
}
