/// A way of rating shots: what the opponent assumes the other player does about a shot.
///
/// Neither fits every player. A player who goes for the puck is beaten by a shot it must chase from behind, and
/// often knocks it into its own goal; a goalkeeper who guards its line is beaten only by what it has not seen yet.
/// ``RivalRead`` tells during a match which one this player is. Package-only: how the opponent plays, not something
/// a user of the library sets.
package enum AttackStyle: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The shot that passes farthest from where the other paddle is.
    case wide
    /// The shot that turns (off a side wall) latest for a paddle that sees the table late.
    case late

    /// `wide` or `late`.
    package var description: String {
        switch self {
        case .wide: "wide"
        case .late: "late"
        }
    }
}
