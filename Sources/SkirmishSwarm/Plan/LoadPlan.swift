import SkirmishScript
import SkirmishWire

/// When bots come and go: the script's profile, adjusted by the command line and sliced to this shard.
///
/// Pure arithmetic on time since the start of the run, so the schedule is fixed in advance and a stalled generator
/// shows up as lateness instead of silently sending less.
public struct LoadPlan: Sendable, Hashable {
    /// One scenario's part of the plan: its stages after the overrides, from its start.
    public struct Scenario: Sendable, Hashable {
        /// The scenario's name (the script's name in the single-profile form).
        public var name: String
        /// How long after the run's start its first stage begins.
        public var start: Duration
        /// Its stages after the overrides, whole-run figures (every shard's bots and arrivals together).
        public internal(set) var stages: [Stage]
        /// Its personas: positions in the script's list.
        public var personas: Range<Int>

        /// When its last stage ends, since the run's start.
        public var end: Duration { start + stages.reduce(.zero) { $0 + $1.length } }

        /// The most concurrent closed-model bots it asks of the whole run.
        public var runPeakClosedBots: Int {
            stages.reduce(0) { peak, stage in
                if case .ramp(let to, _) = stage { return max(peak, to) }
                return peak
            }
        }

        /// Concurrent closed-model bots of the whole run it asks for at `elapsed` since the run's start.
        func globalClosedBots(at elapsed: Duration) -> Int {
            guard elapsed >= start else { return 0 }
            let elapsed = elapsed - start
            var level = 0
            var begin = Duration.zero
            for stage in stages {
                let end = begin + stage.length
                if case .ramp(let to, let over) = stage {
                    if elapsed < end && over > .zero {
                        let fraction = max(0, (elapsed - begin) / over)
                        return level + Int((Double(to - level) * fraction).rounded(.down))
                    }
                    level = to
                }
                if elapsed < end { return level }
                begin = end
            }
            // Past its end a scenario holds no bots: its part of the run is over while others may go on.
            return 0
        }
    }

    /// The scenarios, in script order: one for a single-profile script.
    public private(set) var scenarios: [Scenario]
    /// The slice of the run this process takes; bots and arrival rates are divided among the shards.
    public let shard: Shard

    /// Adjustments from the command line (`--bots`, `--duration`, `--rate`).
    public struct Overrides: Sendable, Hashable {
        /// `--bots`: the peak of the closed-model stages (they are scaled to it), and the cap of open-model stages.
        public var bots: Int?
        /// `--duration`: the profile's length (hold and arrive stages are stretched or shrunk to fit).
        public var duration: Duration?
        /// `--rate`: new bots per second in every open-model stage.
        public var rate: Double?

        /// Overrides; `nil` leaves the script's value.
        public init(bots: Int? = nil, duration: Duration? = nil, rate: Double? = nil) {
            self.bots = bots
            self.duration = duration
            self.rate = rate
        }
    }

    /// Why overrides cannot apply to a script.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong with which override, and what to give instead.
        public var description: String
    }

    /// The plan for `script`, adjusted by `overrides`:
    /// - `bots` scales every closed-model stage so the peak equals it (and caps open-model stages); with several
    ///   scenarios, it is split over the scenarios' peaks by largest remainder, so that their peaks add up to it
    ///   exactly, and a count that would leave a scenario without a bot is refused;
    /// - `duration` stretches or shrinks the hold and arrive stages to fit, keeping ramps as written (or scales every
    ///   stage when the ramps alone are longer); with several scenarios, each scenario's start and length scale by
    ///   the run's;
    /// - `rate` replaces the arrival rate of open-model stages.
    /// A script without a profile gets a 10 % ramp to `bots` (default 10) and a hold for `duration` (default 30 s).
    public init(script: Script, overrides: Overrides = .init(), shard: Shard = .whole) throws(Error) {
        self.shard = shard
        if let bots = overrides.bots, bots < 1 || bots > 10_000_000 {
            throw Error(description: "--bots \(bots): give the peak number of concurrent bots, from 1 up")
        }
        if let duration = overrides.duration, duration <= .zero {
            throw Error(description: "--duration must be longer than 0 s; write it like 30s, 5m or 2h")
        }
        if let rate = overrides.rate, !(rate > 0 && rate.isFinite) {
            throw Error(description: "--rate must be a positive arrival rate, like 50/s")
        }
        let planned = script.plannedScenarios
        if overrides.rate != nil,
            !planned.contains(where: { $0.profile.contains { if case .arrive = $0 { true } else { false } } }),
            !(planned.count == 1 && planned[0].profile.isEmpty)
        {
            throw Error(
                description: "--rate applies to open-model scripts, and this one has no `arrive` stage; "
                    + "use --bots to scale concurrent bots, or add `- {arrive: {rate: 20/s, for: 1m}}`")
        }
        if planned.count == 1 {
            let stages = try Self.adjust(planned[0].profile, overrides: overrides)
            scenarios = [Scenario(name: planned[0].name, start: .zero, stages: stages, personas: planned[0].personas)]
        } else {
            // Every scenario scales by the same factors, so their proportions and offsets stay as written: --bots
            // splits its count over the scenarios' peaks by largest remainder, so the peaks add up to it exactly.
            let peaks = planned.map { scenario in
                scenario.profile.reduce(0) { peak, stage in
                    if case .ramp(let to, _) = stage { return max(peak, to) }
                    return peak
                }
            }
            var targets = peaks
            if let bots = overrides.bots, peaks.contains(where: { $0 > 0 }) {
                targets = PersonaTable.largestRemainder(weights: peaks, total: bots).map { Int($0) }
                if let starved = peaks.indices.first(where: { peaks[$0] > 0 && targets[$0] == 0 }) {
                    let enough = (bots...).first { count in
                        !PersonaTable.largestRemainder(weights: peaks, total: count).enumerated()
                            .contains { peaks[$0.offset] > 0 && $0.element == 0 }
                    }!
                    throw Error(
                        description: "--bots \(bots) leaves scenario `\(planned[starved].name)` without a bot (its "
                            + "peak is \(peaks[starved]) of \(peaks.reduce(0, +))); give --bots \(enough) or more")
                }
            }
            let stretch = overrides.duration.map { $0 / script.duration } ?? 1
            scenarios = planned.enumerated().map { position, scenario in
                var stages = scenario.profile
                if let bots = overrides.bots {
                    let (peak, target) = (peaks[position], targets[position])
                    stages = stages.map { stage in
                        switch stage {
                        case .ramp(let to, let over):
                            let scaled = peak == 0 ? 0 : Int((Double(to) * Double(target) / Double(peak)).rounded())
                            return .ramp(to: scaled, over: over)
                        // As in the single-profile form, --bots caps every open stage.
                        case .arrive(let rate, let length, _): return .arrive(rate: rate, for: length, max: bots)
                        case .hold: return stage
                        }
                    }
                }
                if let rate = overrides.rate { stages = Self.replacingRate(stages, with: rate) }
                if stretch != 1 {
                    stages = Self.fit(stages, to: stages.reduce(.zero) { $0 + $1.length } * stretch)
                }
                return Scenario(
                    name: scenario.name, start: scenario.start * stretch, stages: stages, personas: scenario.personas)
            }
        }
    }

    /// One profile adjusted by `overrides` (the single-profile form).
    private static func adjust(_ profile: [Stage], overrides: Overrides) throws(Error) -> [Stage] {
        var stages = profile
        if stages.isEmpty {
            let total = overrides.duration ?? .seconds(30)
            let ramp = min(total / 10, .seconds(10))
            stages = [.ramp(to: overrides.bots ?? 10, over: ramp), .hold(for: total - ramp)]
        } else {
            if let bots = overrides.bots {
                let peak = stages.reduce(0) { peak, stage in
                    if case .ramp(let to, _) = stage { return max(peak, to) }
                    return peak
                }
                stages = stages.map { stage in
                    switch stage {
                    case .ramp(let to, let over):
                        let scaled = peak == 0 ? bots : Int((Double(to) * Double(bots) / Double(peak)).rounded())
                        return .ramp(to: scaled, over: over)
                    case .arrive(let rate, let length, _): return .arrive(rate: rate, for: length, max: bots)
                    case .hold: return stage
                    }
                }
            }
            if let rate = overrides.rate { stages = replacingRate(stages, with: rate) }
            if let duration = overrides.duration {
                stages = Self.fit(stages, to: duration)
            }
        }
        guard stages.contains(where: { $0.length > .zero }) else {
            throw Error(description: "the load profile lasts no time at all; give it a `hold` stage or pass --duration")
        }
        return stages
    }

    private static func replacingRate(_ stages: [Stage], with rate: Double) -> [Stage] {
        stages.map { stage in
            if case .arrive(_, let length, let cap) = stage { return .arrive(rate: rate, for: length, max: cap) }
            return stage
        }
    }

    private static func fit(_ stages: [Stage], to total: Duration) -> [Stage] {
        let stretchable = stages.reduce(Duration.zero) { sum, stage in
            if case .ramp = stage { return sum }
            return sum + stage.length
        }
        let fixed = stages.reduce(Duration.zero) { $0 + $1.length } - stretchable
        if stretchable > .zero, fixed < total {
            let factor = (total - fixed) / stretchable
            return stages.map { stage in
                switch stage {
                case .ramp: stage
                case .hold(let length): .hold(for: length * factor)
                case .arrive(let rate, let length, let cap): .arrive(rate: rate, for: length * factor, max: cap)
                }
            }
        }
        let all = fixed + stretchable
        guard all > .zero else { return stages }
        let factor = total / all
        return stages.map { stage in
            switch stage {
            case .ramp(let to, let over): .ramp(to: to, over: over * factor)
            case .hold(let length): .hold(for: length * factor)
            case .arrive(let rate, let length, let cap): .arrive(rate: rate, for: length * factor, max: cap)
            }
        }
    }

    /// Total length of the run: until the last scenario ends.
    public var duration: Duration { scenarios.reduce(.zero) { max($0, $1.end) } }

    /// Concurrent closed-model bots this shard should have at `elapsed` since the start, every scenario's.
    public func closedBots(at elapsed: Duration) -> Int {
        scenarios.indices.reduce(0) { $0 + closedBots(at: elapsed, scenario: $1) }
    }

    /// Concurrent closed-model bots of scenario `scenario` this shard should have at `elapsed` since the start.
    public func closedBots(at elapsed: Duration, scenario: Int) -> Int {
        shard.share(of: scenarios[scenario].globalClosedBots(at: elapsed))
    }

    /// The most concurrent closed-model bots this shard ever runs (each scenario's peak, added up).
    public var peakClosedBots: Int { scenarios.reduce(0) { $0 + shard.share(of: $1.runPeakClosedBots) } }

    /// The most concurrent closed-model bots of the whole run, every shard's together (each scenario's peak, added
    /// up).
    public var runPeakClosedBots: Int { scenarios.reduce(0) { $0 + $1.runPeakClosedBots } }

    /// The most concurrent open-model bots this shard may run (each scenario's largest arrival cap, added up).
    public var peakOpenBots: Int {
        scenarios.reduce(0) { sum, scenario in
            sum
                + shard.share(
                    of: scenario.stages.reduce(0) { peak, stage in
                        if case .arrive(_, _, let cap) = stage { return max(peak, cap) }
                        return peak
                    })
        }
    }

    func globalClosedBots(at elapsed: Duration) -> Int {
        scenarios.reduce(0) { $0 + $1.globalClosedBots(at: elapsed) }
    }

    /// One open-model arrival: a new bot that plays its steps once and leaves.
    public struct Arrival: Sendable, Hashable {
        /// Numbered across the whole run, every scenario and shard.
        public var number: Int
        /// Its scenario, a position in ``LoadPlan/scenarios``.
        public var scenario: Int = 0
        /// Numbered within its scenario across all shards (what deals it to a shard and a persona).
        public var local: Int = 0
        /// When it is scheduled, since the start of the run.
        public var at: Duration
        /// The stage's cap on concurrent open-model bots (for this shard).
        public var cap: Int
    }

    /// This shard's arrivals scheduled in `[from, to)`, in order within each scenario, at most `limit` of them.
    ///
    /// Arrival *k* of a stage starting at *s* with rate *r* is due at *s + k / r*; arrivals numbered within their
    /// scenario are dealt round-robin to shards.
    public func arrivals(from: Duration, to: Duration, limit: Int = 100_000) -> [Arrival] {
        var result: [Arrival] = []
        var numberBase = 0
        for (position, scenario) in scenarios.enumerated() {
            var start = scenario.start
            var localBase = 0
            for stage in scenario.stages {
                let end = start + stage.length
                if case .arrive(let rate, let length, let cap) = stage, rate > 0 {
                    let count = Int((length.seconds * rate).rounded(.down))
                    let low = max(0, Int(((from - start).seconds * rate).rounded(.up)))
                    let high = min(count, Int(((to - start).seconds * rate).rounded(.up)))
                    var k = low
                    while k < high, result.count < limit {
                        let local = localBase + k
                        let at = start + Duration(seconds: Double(k) / rate)
                        if local % shard.count == shard.index, at >= from, at < to {
                            result.append(
                                Arrival(
                                    number: numberBase + local, scenario: position, local: local, at: at,
                                    cap: shard.share(of: cap)))
                        }
                        k += 1
                    }
                    localBase += count
                }
                start = end
            }
            numberBase += localBase
        }
        return result
    }
}
