import Synchronization

/// What every ``MirrorPlayer`` of a run saw, added up across the swarm's event loops.
///
/// The runtime's own figures (matches, desyncs, errors) go through `AgentContext`; these are the behaviour's own. A
/// relaxed atomic add per event keeps the per-tick path free of locks and allocation.
final class MirrorTally: Sendable {
    enum Figure {
        /// Seats granted (one per match joined).
        case seated
        /// Table snapshots received, in any phase.
        case snapshots
        /// Snapshots received while the match was playing.
        case playingSnapshots
        /// Matches in which the server echoed one of the player's inputs as applied.
        case inputsApplied
        /// Playing snapshots with the puck more than a paddle radius off the table's centre line.
        case offCentre
        /// Of those, the snapshots in which the paddle stood within a paddle radius of the puck's (reachable) x.
        case shadowing
        /// Playing snapshots in which the paddle stood on its line, `depth` pixels up from its goal line.
        case atDepth
    }

    private let seated = Atomic<Int>(0)
    private let snapshots = Atomic<Int>(0)
    private let playingSnapshots = Atomic<Int>(0)
    private let inputsApplied = Atomic<Int>(0)
    private let offCentre = Atomic<Int>(0)
    private let shadowing = Atomic<Int>(0)
    private let atDepth = Atomic<Int>(0)
    private let depth = Atomic<Int>(-1)

    init() {}

    /// Counts one more `figure`.
    func add(_ figure: Figure) {
        switch figure {
        case .seated: seated.add(1, ordering: .relaxed)
        case .snapshots: snapshots.add(1, ordering: .relaxed)
        case .playingSnapshots: playingSnapshots.add(1, ordering: .relaxed)
        case .inputsApplied: inputsApplied.add(1, ordering: .relaxed)
        case .offCentre: offCentre.add(1, ordering: .relaxed)
        case .shadowing: shadowing.add(1, ordering: .relaxed)
        case .atDepth: atDepth.add(1, ordering: .relaxed)
        }
    }

    /// Notes how far up from its goal line, in whole pixels, a paddle stood in a playing snapshot.
    func record(depth pixels: Float) {
        _ = depth.max(Int(pixels.rounded()), ordering: .relaxed)
    }

    /// The farthest up from its goal line any paddle stood in a playing snapshot; -1 before the first. A paddle moves
    /// only towards its player's inputs, from its start spot 40 px up, so for a depth of 40 or more this is the depth
    /// the mirrors asked for.
    var deepest: Int { depth.load(ordering: .relaxed) }

    /// The count of `figure` so far.
    subscript(_ figure: Figure) -> Int {
        switch figure {
        case .seated: seated.load(ordering: .relaxed)
        case .snapshots: snapshots.load(ordering: .relaxed)
        case .playingSnapshots: playingSnapshots.load(ordering: .relaxed)
        case .inputsApplied: inputsApplied.load(ordering: .relaxed)
        case .offCentre: offCentre.load(ordering: .relaxed)
        case .shadowing: shadowing.load(ordering: .relaxed)
        case .atDepth: atDepth.load(ordering: .relaxed)
        }
    }
}
