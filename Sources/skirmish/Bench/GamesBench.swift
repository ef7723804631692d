import ArgumentParser
import SkirmishBench

/// `skirmish bench games`: what the rules cost per step, the numbers the server and every bot pay per tick or turn.
struct GamesBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "games",
        abstract: "Time a Puck tick, a Snap turn and a Suns strike, and count heap allocations per operation.",
        discussion: """
            Puck: two scripted paddles chase the puck so it is hit, bounces and scores; a finished match restarts \
            (that restart is inside the timed loop). "server tick" is what the reference server pays per match \
            per tick: one step, plus every 2nd tick a snapshot with its state hash for each seat. "replica apply" \
            is what a bot pays per snapshot: rebuild the table from it and check its hash.

            Snap: whole seeded 2–4 seat games (a fresh copy of a dealt table each, which allocates its piles once); \
            players turn in order and a quarter of the pairs are called. Figures are per turn, and "turn + hash" \
            adds the state hash the server sends in every CardTurned.

            Suns: strikes of radius 0.05–0.3 at random points of an adopted 5-sun layout.

            Single-threaded and bounded: each row runs --iterations operations after a warm-up of a tenth as many.
            """
    )

    @Option(help: "Operations timed per row (Snap rows play whole games until at least this many turns).")
    var iterations = 1_000_000

    func validate() throws {
        guard iterations >= 1_000 else {
            throw ValidationError("--iterations must be at least 1000 for a stable figure, got \(iterations)")
        }
    }

    func run() throws {
        let result = try GamesBenchmark.run(.init(iterations: iterations), environment: .skirmish)
        for line in result.lines { print(line) }
    }
}
