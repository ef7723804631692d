import Synchronization

/// What every ``CountPlayer`` of a run saw, added up across the swarm's event loops.
final class CountTally: Sendable {
    enum Figure {
        /// Seats granted (one per match joined).
        case seated
        /// Moves sent.
        case moves
        /// Matches this player won or lost (each match counts once per player).
        case won, lost
    }

    private let seated = Atomic<Int>(0)
    private let moves = Atomic<Int>(0)
    private let won = Atomic<Int>(0)
    private let lost = Atomic<Int>(0)

    init() {}

    /// Counts one more `figure`.
    func add(_ figure: Figure) {
        switch figure {
        case .seated: seated.add(1, ordering: .relaxed)
        case .moves: moves.add(1, ordering: .relaxed)
        case .won: won.add(1, ordering: .relaxed)
        case .lost: lost.add(1, ordering: .relaxed)
        }
    }

    /// The count of `figure` so far.
    subscript(_ figure: Figure) -> Int {
        switch figure {
        case .seated: seated.load(ordering: .relaxed)
        case .moves: moves.load(ordering: .relaxed)
        case .won: won.load(ordering: .relaxed)
        case .lost: lost.load(ordering: .relaxed)
        }
    }
}
