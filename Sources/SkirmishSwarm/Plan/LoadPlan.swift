import SkirmishScript
import SkirmishWire

/// When bots come and go: the script's profile, adjusted by the command line and sliced to this shard.
///
/// Pure arithmetic on time since the start of the run, so the schedule is fixed in advance and a stalled generator
/// shows up as lateness instead of silently sending less.
public struct LoadPlan: Sendable, Hashable {
    /// The profile's stages after the overrides, with this shard's share of bots and arrivals.
    public private(set) var stages: [Stage]
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
    /// - `bots` scales every closed-model stage so the peak equals it (and caps open-model stages);
    /// - `duration` stretches or shrinks the hold and arrive stages to fit, keeping ramps as written (or scales every
    ///   stage when the ramps alone are longer);
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
        var stages = script.profile
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
            if let rate = overrides.rate {
                guard stages.contains(where: { if case .arrive = $0 { true } else { false } }) else {
                    throw Error(
                        description: "--rate applies to open-model scripts, and this one has no `arrive` stage; "
                            + "use --bots to scale concurrent bots, or add `- {arrive: {rate: 20/s, for: 1m}}`")
                }
                stages = stages.map { stage in
                    if case .arrive(_, let length, let cap) = stage {
                        return .arrive(rate: rate, for: length, max: cap)
                    }
                    return stage
                }
            }
            if let duration = overrides.duration {
                stages = Self.fit(stages, to: duration)
            }
        }
        guard stages.contains(where: { $0.length > .zero }) else {
            throw Error(description: "the load profile lasts no time at all; give it a `hold` stage or pass --duration")
        }
        self.stages = stages
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

    /// Total length of the run.
    public var duration: Duration { stages.reduce(.zero) { $0 + $1.length } }

    /// Concurrent closed-model bots this shard should have at `elapsed` since the start.
    public func closedBots(at elapsed: Duration) -> Int {
        shard.share(of: globalClosedBots(at: elapsed))
    }

    /// The most concurrent closed-model bots this shard ever runs.
    public var peakClosedBots: Int { shard.share(of: runPeakClosedBots) }

    /// The most concurrent closed-model bots of the whole run, every shard's together.
    public var runPeakClosedBots: Int {
        stages.reduce(0) { peak, stage in
            if case .ramp(let to, _) = stage { return max(peak, to) }
            return peak
        }
    }

    /// The most concurrent open-model bots this shard may run (the largest arrival cap).
    public var peakOpenBots: Int {
        shard.share(
            of: stages.reduce(0) { peak, stage in
                if case .arrive(_, _, let cap) = stage { return max(peak, cap) }
                return peak
            })
    }

    func globalClosedBots(at elapsed: Duration) -> Int {
        var level = 0
        var start = Duration.zero
        for stage in stages {
            let end = start + stage.length
            if case .ramp(let to, let over) = stage {
                if elapsed < end && over > .zero {
                    let fraction = max(0, (elapsed - start) / over)
                    return level + Int((Double(to - level) * fraction).rounded(.down))
                }
                level = to
            }
            if elapsed < end { return level }
            start = end
        }
        return level
    }

    /// One open-model arrival: a new bot that plays its steps once and leaves.
    public struct Arrival: Sendable, Hashable {
        /// Numbered across the whole run and all shards.
        public var number: Int
        /// When it is scheduled, since the start of the run.
        public var at: Duration
        /// The stage's cap on concurrent open-model bots (for this shard).
        public var cap: Int
    }

    /// This shard's arrivals scheduled in `[from, to)`, in order, at most `limit` of them.
    ///
    /// Arrival *k* of a stage starting at *s* with rate *r* is due at *s + k / r*; globally numbered arrivals are dealt
    /// round-robin to shards.
    public func arrivals(from: Duration, to: Duration, limit: Int = 100_000) -> [Arrival] {
        var result: [Arrival] = []
        var start = Duration.zero
        var numberBase = 0
        for stage in stages {
            let end = start + stage.length
            if case .arrive(let rate, let length, let cap) = stage, rate > 0 {
                let count = Int((length.seconds * rate).rounded(.down))
                let low = max(0, Int(((from - start).seconds * rate).rounded(.up)))
                let high = min(count, Int(((to - start).seconds * rate).rounded(.up)))
                var k = low
                while k < high, result.count < limit {
                    let number = numberBase + k
                    let at = start + Duration(seconds: Double(k) / rate)
                    if number % shard.count == shard.index, at >= from, at < to {
                        result.append(Arrival(number: number, at: at, cap: shard.share(of: cap)))
                    }
                    k += 1
                }
                numberBase += count
            }
            start = end
        }
        return result
    }
}
