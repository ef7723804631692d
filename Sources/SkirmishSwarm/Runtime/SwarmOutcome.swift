import SkirmishTelemetry

/// What a finished run measured.
public struct SwarmOutcome: Sendable {
    /// Every series, merged over loops, at the end of the run.
    public var snapshot: MetricsSnapshot
    /// One point a second, for the report's charts.
    public var timeline: RunTimeline
    /// How long the run took.
    public var elapsed: Duration
    /// Whether it was stopped early (SIGINT, SIGTERM).
    public var interrupted: Bool
    /// The most closed-model bots the plan asked of this shard at once.
    public var peakBots: Int
    /// The CPU share of one core the busiest bot event loop used over the run (0…1); near 1, the generator rather
    /// than the server set the pace.
    public var busiestLoop: Double? = nil
    /// The threshold with `abort_on_fail` that stopped the run, if one did.
    public var aborted: ThresholdJudge.Breach? = nil
    /// How each windowed threshold fared, in script order (`nil` for the unwindowed ones).
    public var windows: [ThresholdJudge.WindowRecord?] = []
    /// Each persona's figures per block of time, for comparisons with another run.
    public var samples: RunSamples? = nil
    /// The run's first desync episodes (at most 100), in full: bot, match, tick, part, expected and observed values.
    public var desyncEpisodes: [DesyncEpisode] = []
    /// How many of ``peakBots`` each persona held, in script order (empty: dealt again from the plan).
    public var personaPeaks: [Int] = []
}

/// One progress sample, once a second.
public struct SwarmProgress: Sendable {
    /// Time since the run started.
    public var elapsed: Duration
    /// The plan's whole length; `elapsed / duration` is the progress.
    public var duration: Duration
    /// Bots connected or connecting now.
    public var bots: Int
    /// Every series of every client loop, merged at this moment; cumulative since the start.
    public var snapshot: MetricsSnapshot
    /// The previous sample, and how long before this one it was taken: rates come from the difference.
    public var previous: (Duration, MetricsSnapshot)?
    /// The CPU share of one core the busiest bot event loop used since the previous sample (0…1).
    public var busiestLoop: Double? = nil
}
