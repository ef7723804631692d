import SkirmishWire

/// What a replica knows about the desync it just reported: where, at which tick, and the two values that differ.
///
/// Built only on the rare path where a check fails (it holds strings), so a replica that agrees with the server
/// allocates nothing. Values are rendered in the receiving player's own frame, with `Float`'s shortest exact
/// spelling, so a one-ulp difference shows.
public struct ReplicaDivergence: Sendable, Hashable {
    /// The part that differs (`puck`, `paddles`, `score`, `phase`, `deck`, `piles`, `turn`, `outcome`, …).
    public var part: String
    /// The first tick at which the two views are known to differ: the tick of the message that showed it (Puck), or
    /// the server's turn count for Snap; `nil` for messages without one.
    public var tick: UInt32?
    /// The earliest tick the divergence can have started at (the tick after the last state that agreed), when known.
    public var since: UInt32?
    /// What the replica computed with the shared rules (`field=value`, …).
    public var expected: String
    /// What the server's message said.
    public var observed: String

    /// A divergence in `part` at `tick`.
    public init(part: String, tick: UInt32?, since: UInt32? = nil, expected: String, observed: String) {
        self.part = part
        self.tick = tick
        self.since = since
        self.expected = expected
        self.observed = observed
    }
}
