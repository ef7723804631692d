import SkirmishGames
import SkirmishWire

/// What the opponent has seen of the other player's defence, and the ``AttackStyle`` that follows from it: does it
/// come out for the puck, or keep its goal?
///
/// The read is how far the other paddle stands from its own goal line while the puck is in its half but short of its
/// goal area (120 to 240 px out) — an average over about the last two seconds of such snapshots. A player who comes
/// out to meet the puck there is beaten ``AttackStyle/wide``; one who keeps goal, ``AttackStyle/late``. Measured
/// against the evaluation's players at 0, 50 and 150 ms, the goalkeepers stand 60–91 px out on average and the
/// chaser 138–163 px at 0 and 50 ms; at 150 ms it is late to the puck and stands 101–127 px out, so it reads either
/// way there, where either style beats it. The average starts at ``keeper``'s depth, so it takes about a second and a
/// half of a player coming out before the style turns `wide`: a goalkeeper who steps out once to strike is still one.
///
/// A value type fed the snapshots the opponent sees; it reads no clock.
package struct RivalRead: Sendable, Hashable {
    /// How far out the other paddle stands, px from its goal line, on average.
    package private(set) var depth = RivalRead.keeper

    /// Where a goalkeeper stands, px from its goal line: the depth the read starts from.
    static let keeper: Float = 60
    /// Farther out than this on average, the other player comes out for the puck.
    static let comesOut: Float = 105
    /// The weight of each new sighting in the average (snapshots come 30 a second: about two seconds).
    static let gain: Float = 1.0 / 60

    /// A read that has seen nothing yet: a goalkeeper until the other player shows otherwise.
    package init() {}

    /// The style shots are rated in against this player.
    package var style: AttackStyle { depth > Self.comesOut ? .wide : .late }

    /// A snapshot in the opponent's own frame (its goal at the bottom, the other player's at the top, y = 0).
    package mutating func observe(_ snapshot: TableSnapshot) {
        guard snapshot.phase == .playing, (120..<PuckConstants.height / 2).contains(snapshot.puck.y) else { return }
        depth += (snapshot.them.y - depth) * Self.gain
    }
}
