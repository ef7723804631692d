import ArgumentParser
import SkirmishGames
import SkirmishOpponent
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench opponent`: the cost of one AI decision, per difficulty, and its heap allocations.
struct OpponentBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "opponent",
        abstract: "Time one AI opponent decision per difficulty and count its heap allocations.",
        discussion: """
            Budget (DESIGN §9): one decision under 50 µs. The opponent plays a stream of seeded shots served on \
            the shared physics: a snapshot every second tick arriving 100 ms late, a round trip every 200 ms, and a \
            decision every tick — so the figure covers prediction across latency, the path scan, shot selection \
            and the simulated strikes. Exits 1 when a decision allocates.
            """
    )

    @Option(help: "Decisions timed per difficulty.")
    var iterations = 200_000

    func validate() throws {
        guard iterations > 0 else { throw ValidationError("--iterations must be positive, got \(iterations)") }
    }

    func run() throws {
        try Measurement.checkAllocationCounter()
        let feed = Self.feed(ticks: Self.ticks)
        print("opponent: one decision, \(iterations) per difficulty (100 ms one-way, shots every 1.5 s)")
        print(
            pad("difficulty", 12) + pad("ns/decision", 14, left: true) + pad("µs/decision", 14, left: true)
                + pad("allocs/decision", 17, left: true))
        var allocationFree = true
        for difficulty in Opponent.Difficulty.allCases {
            var opponent = Opponent(seat: 0, configuration: OpponentConfiguration(difficulty: difficulty), seed: 7)
            var checksum: Float = 0
            // One tick of the opponent: take in what arrived by now, then decide. The clock runs on across the
            // warm-up, and the recorded match repeats with its ticks and times shifted, so time never goes back.
            var tick = 0
            var next = 0
            let measurement = Measurement.run(iterations: iterations) { _ in
                tick += 1
                let now = Double(tick) / 60
                while true {
                    let cycle = next / feed.count
                    var entry = feed[next % feed.count]
                    entry.time += Double(cycle) * Double(Self.ticks) / 60
                    guard entry.time <= now else { break }
                    entry.snapshot.tick &+= UInt32(cycle * Self.ticks)
                    opponent.observe(entry.snapshot, at: entry.time)
                    next += 1
                }
                if tick % 12 == 0 { opponent.observeRoundTrip(0.2, at: now) }
                checksum += opponent.decide(now: now).x
            }
            allocationFree = allocationFree && measurement.allocations == 0
            print(
                pad(difficulty.rawValue, 12) + pad(fixed(measurement.nanosecondsPerIteration, 0), 14, left: true)
                    + pad(fixed(measurement.nanosecondsPerIteration / 1000, 2), 14, left: true)
                    + pad(fixed(measurement.allocationsPerIteration, 3), 17, left: true)
                    + (checksum.isNaN ? " " : ""))
        }
        if !allocationFree {
            print("FAIL: a decision allocated on the heap")
            throw ExitCode(1)
        }
    }

    /// Ticks of the recorded match the benchmark plays over and over.
    static let ticks = 3_600

    /// Snapshots of a table where a shot is served at the bottom seat every 90 ticks, as they would arrive 100 ms
    /// late.
    static func feed(ticks: Int) -> [(snapshot: TableSnapshot, time: Double)] {
        var match = PuckMatch()
        match.start()
        var random = SeededRandom(seed: 11)
        var feed: [(TableSnapshot, Double)] = []
        for tick in 1...ticks {
            if tick % 90 == 1 {
                match.serve(PuckShot.random(bounces: tick / 90 % 3, using: &random).puck, resettingScore: true)
            }
            _ = match.step(nil, nil)
            if tick % 2 == 0 { feed.append((match.snapshot(for: 0, lastInputStep: 0), Double(tick) / 60 + 0.1)) }
        }
        return feed
    }
}
