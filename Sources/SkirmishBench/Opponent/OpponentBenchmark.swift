import SkirmishGames
import SkirmishOpponent
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// `skirmish bench opponent`: the cost of one AI decision, per difficulty, and its heap allocations.
package enum OpponentBenchmark {
    package struct Configuration: Sendable {
        /// Decisions timed per difficulty.
        package var iterations = 200_000

        package init(iterations: Int = 200_000) {
            self.iterations = iterations
        }
    }

    package struct Row: Sendable, Equatable {
        package var difficulty: String
        package var measurement: Measurement

        package var line: String {
            pad(difficulty, 12) + pad(fixed(measurement.nanosecondsPerIteration, 0), 14, left: true)
                + pad(fixed(measurement.nanosecondsPerIteration / 1000, 2), 14, left: true)
                + pad(fixed(measurement.allocationsPerIteration, 3), 17, left: true)
        }
    }

    package struct Result: Sendable {
        package var iterations: Int
        package var rows: [Row]

        /// The budget: no decision allocates.
        package var passed: Bool { rows.allSatisfy { $0.measurement.allocations == 0 } }

        package var lines: [String] {
            var lines = [
                "opponent: one decision, \(iterations) per difficulty (100 ms one-way, shots every 1.5 s)",
                pad("difficulty", 12) + pad("ns/decision", 14, left: true) + pad("µs/decision", 14, left: true)
                    + pad("allocs/decision", 17, left: true),
            ]
            lines += rows.map(\.line)
            if !passed { lines.append("FAIL: a decision allocated on the heap") }
            return lines
        }
    }

    package static func run(_ configuration: Configuration, environment: BenchEnvironment) throws -> Result {
        try Measurement.checkAllocationCounter(environment)
        let feed = Self.feed(ticks: Self.ticks)
        var rows: [Row] = []
        for difficulty in Opponent.Difficulty.allCases {
            var opponent = Opponent(seat: 0, configuration: OpponentConfiguration(difficulty: difficulty), seed: 7)
            var checksum: Float = 0
            // One tick of the opponent: take in what arrived by now, then decide. The clock runs on across the
            // warm-up, and the recorded match repeats with its ticks and times shifted, so time never goes back.
            var tick = 0
            var next = 0
            let measurement = Measurement.run(iterations: configuration.iterations, environment: environment) { _ in
                tick += 1
                let now = Double(tick) / 60
                while true {
                    let cycle = next / feed.count
                    var entry = feed[next % feed.count]
                    entry.time += Double(cycle) * Double(Self.ticks) / 60
                    guard entry.time <= now else { break }
                    entry.snapshot.tick &+= UInt32(cycle * Self.ticks)
                    opponent.observe(entry.snapshot, at: Instant(seconds: entry.time))
                    next += 1
                }
                if tick % 12 == 0 { opponent.observeRoundTrip(.milliseconds(200), at: Instant(seconds: now)) }
                checksum += opponent.decide(now: Instant(seconds: now)).x
            }
            blackHole(checksum)
            rows.append(Row(difficulty: difficulty.rawValue, measurement: measurement))
        }
        return Result(iterations: configuration.iterations, rows: rows)
    }

    /// Ticks of the recorded match the benchmark plays over and over.
    package static let ticks = 3_600

    /// Snapshots of a table where a shot is served at the bottom seat every 90 ticks, as they would arrive 100 ms
    /// late.
    package static func feed(ticks: Int) -> [(snapshot: TableSnapshot, time: Double)] {
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
