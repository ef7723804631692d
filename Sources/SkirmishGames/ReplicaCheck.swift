import SkirmishWire

/// What a replica found when it checked an authoritative message against its own state.
///
/// A replica never trusts a hash it cannot recompute: every check recomputes the state hash from the replica's own
/// state and compares. `part` names where the views differ as precisely as the message allows (`"puck"`,
/// `"paddles"`, `"score"`, `"phase"`, `"deck"`, `"piles"`, `"turn"`, `"outcome"`, `"layout"`, `"captures"`, or
/// `"hash"` when only the combined hash disagrees), for the desync log.
public enum ReplicaCheck: Sendable, Hashable {
    /// The message agrees with the replica.
    case ok
    /// The message and the replica disagree; `part` says where.
    case desync(part: String)

    /// Whether this is `.ok`.
    public var isOK: Bool { self == .ok }
}
