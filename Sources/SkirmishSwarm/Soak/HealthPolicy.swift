import SkirmishScript
import SkirmishWire

/// What a soak's health checks allow: when warm-up ends, how much growth counts as flat, and the budgets.
///
/// "Flat after warm-up" is defined on the samples taken in the *steady window* — from ``warmUp`` to ``steadyUntil``
/// (the start of a closing ramp-down, if the profile has one): with at least ``minimumSamples`` samples spanning at
/// least ``minimumSpan`` seconds, the Theil–Sen line through them (`Trend`) may rise across the window by no more
/// than the tolerance — the larger of an absolute allowance and a fraction of the window's median level. Falling is
/// always fine. A longer run therefore detects a smaller leak: an 8-hour soak fails on 4 MiB an hour, a 2-minute CI
/// soak only on a fast one.
public struct HealthPolicy: Sendable, Hashable, Codable {
    /// How much a resource may grow across the steady window.
    public struct Tolerance: Sendable, Hashable, Codable {
        /// Growth always allowed, in the resource's unit (bytes, descriptors).
        public var absolute: Double
        /// Growth allowed as a fraction of the window's median level.
        public var relative: Double

        /// Growth allowed: the larger of `absolute` (in the resource's unit) and `relative` × the level.
        public init(absolute: Double, relative: Double) {
            self.absolute = absolute
            self.relative = relative
        }

        /// The growth allowed at `level`.
        public func allowed(atLevel level: Double) -> Double { max(absolute, relative * level) }
    }

    /// Seconds after the start before resources are expected to be flat (the ramp up plus settling).
    public var warmUp: Double
    /// Seconds after which samples no longer count for flatness (a closing ramp down); `nil`: the end of the run.
    public var steadyUntil: Double?
    /// Resident memory: 32 MiB or 10 % of the level.
    public var memory = Tolerance(absolute: 32 * 1_048_576, relative: 0.10)
    /// Open file descriptors: 16 or 5 % of the level (one socket per bot in a match; bots come and go between matches).
    public var openFiles = Tolerance(absolute: 16, relative: 0.05)
    /// Samples the steady window needs before flatness is judged.
    public var minimumSamples = 5
    /// Seconds the steady window must span before flatness is judged.
    public var minimumSpan: Double = 30
    /// Desync episodes allowed per completed match (0: none at all).
    public var maxDesyncRate: Double = 0
    /// Errors allowed per handshake attempt over the whole run.
    public var errorBudget: Double = 0.01
    /// Tick lateness p99 allowed in each interval after warm-up, seconds (DESIGN §9: 5 ms).
    public var latenessBudget: Double = 0.005
    /// Share of the intervals after warm-up that may exceed ``latenessBudget`` (at least one may), so one hiccup of a
    /// shared machine does not fail an eight-hour run while a generator that is always late does.
    public var latenessAllowance: Double = 0.05

    /// A policy with the default limits, flatness judged from `warmUp` seconds until `steadyUntil` (the end: `nil`).
    public init(warmUp: Double, steadyUntil: Double? = nil) {
        self.warmUp = warmUp
        self.steadyUntil = steadyUntil
    }

    /// The default policy for `plan`: warm-up lasts until the profile first reaches its peak plus 30 s, and at least
    /// a tenth of the run, but at most 30 minutes and never more than half the run; the steady window ends where a
    /// closing ramp down begins.
    public init(plan: LoadPlan) {
        let total = plan.duration.seconds
        var peakReached = 0.0
        var steadyUntil: Double?
        // Each scenario from its start: warm-up lasts until the last one reaches its peak, and the steady window
        // ends where the first closing ramp down of a scenario that lasts to the end begins.
        for scenario in plan.scenarios {
            var elapsed = scenario.start.seconds
            var level = 0
            var peak = 0
            var lastRampStart: Double?
            var lastRampFalls = false
            for stage in scenario.stages {
                let length = stage.length.seconds
                if case .ramp(let to, _) = stage {
                    if to > peak {
                        peak = to
                        peakReached = max(peakReached, elapsed + length)
                    }
                    lastRampStart = elapsed
                    lastRampFalls = to < level
                    level = to
                } else {
                    lastRampStart = nil
                }
                elapsed += length
            }
            // Only the scenarios that last to the run's end close it: one that ends early (a rush in a night's
            // soak) would otherwise leave next to no steady window, and the leak and stall checks nothing to judge.
            if lastRampFalls, let start = lastRampStart, elapsed >= total - 0.001 {
                steadyUntil = min(steadyUntil ?? start, start)
            }
        }
        let warmUp = min(max(peakReached + 30, total / 10), 1_800, total / 2)
        self.init(warmUp: warmUp, steadyUntil: steadyUntil)
    }
}
