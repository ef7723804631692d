import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

/// Judges a script's thresholds while the run lasts: each sliding window of a windowed threshold, and the run so
/// far for a threshold that may abort the run.
///
/// Fed the swarm's merged snapshot once a second (``observe(_:at:)``), it keeps, per windowed threshold, the
/// per-second differences inside one window and their running sum — never a copy of the whole run — so a
/// five-minute window costs 300 small readings however long the run is. A window is judged each second once a whole
/// window has passed; a run shorter than its window is judged once, over the whole run, by ``finish(_:at:)``.
/// A threshold whose figure no persona measures (no series: a `desyncs` threshold on a protocol nothing checks) is
/// never judged here, so it neither aborts the run nor fails a window as a stall; the summary fails it as "not
/// measured". Time is a parameter: the judge never reads a clock.
public struct ThresholdJudge: Sendable {
    /// What stopped a run early: the threshold, when, and the figure that failed it.
    public struct Breach: Sendable, Hashable, Codable {
        /// `rtt_p99 < 120ms over every 5m window`, as the threshold is described.
        public var threshold: String
        /// Seconds into the run when it was judged.
        public var atSeconds: Double
        /// The failing window (start and end, seconds into the run); for an unwindowed threshold, the run so far.
        public var windowStartSeconds: Double
        /// The failing window's end, in seconds into the run.
        public var windowEndSeconds: Double
        /// The figure that failed it, in the metric's base unit; `nil` for a percentile window with no sample at all
        /// while bots were connected (no Pong, no snapshot: a stall).
        public var value: Double?
    }

    /// How one windowed threshold fared over all its windows.
    public struct WindowRecord: Sendable, Hashable, Codable {
        /// Windows judged (one a second once the first is complete).
        public var judged: Int = 0
        /// Windows that failed.
        public var failed: Int = 0
        /// The first window that failed.
        public var firstFailure: Breach?
        /// The worst figure any judged window had (highest for `<` limits, lowest for `>` ones).
        public var worst: Double?
    }

    private struct Slot: Sendable {
        let threshold: Threshold
        /// Per-second differences inside the current window, oldest first, with the second each one ends at.
        var steps: [(end: Double, reading: ThresholdReading)] = []
        /// The sum of ``steps``: the current window.
        var window = ThresholdReading()
        var record = WindowRecord()
    }

    private let legit: [String]
    private var slots: [Slot]
    private var previous: [ThresholdReading]
    private var lastSeconds = -Double.infinity

    /// The records of windowed thresholds, in script order (`nil` for unwindowed ones).
    public var windowRecords: [WindowRecord?] { slots.map { $0.threshold.window == nil ? nil : $0.record } }

    /// A judge for `thresholds`, reading the personas named in `legit` only.
    public init(thresholds: [Threshold], legit: [String]) {
        self.legit = legit
        slots = thresholds.map { Slot(threshold: $0) }
        previous = thresholds.map { _ in ThresholdReading() }
    }

    /// Whether anything needs judging while the run lasts.
    public var isIdle: Bool { slots.allSatisfy { $0.threshold.window == nil && !$0.threshold.abortOnFail } }

    /// Judges the snapshot taken `seconds` into the run; returns the breach that must stop the run, if any.
    public mutating func observe(_ snapshot: MetricsSnapshot, at seconds: Double) -> Breach? {
        // A snapshot no later than the last adds nothing (the final one, when the run ended on a sample).
        guard seconds > lastSeconds else { return nil }
        lastSeconds = seconds
        let reader = SnapshotReader(snapshot: snapshot, legit: legit)
        var abort: Breach?
        for index in slots.indices {
            let threshold = slots[index].threshold
            guard threshold.window != nil || threshold.abortOnFail else { continue }
            let reading = threshold.metric.reading(reader.scoped(to: threshold))
            defer { previous[index] = reading }
            guard let window = threshold.window?.seconds else {
                // The run so far.
                if reading.measured, threshold.metric.isJudgeable(reading),
                    let value = threshold.metric.value(of: reading),
                    !threshold.holds(value), seconds >= threshold.delayAbortEval.seconds, abort == nil
                {
                    abort = Breach(
                        threshold: threshold.description, atSeconds: seconds, windowStartSeconds: 0,
                        windowEndSeconds: seconds, value: value)
                }
                continue
            }
            let step = reading.subtracting(previous[index])
            slots[index].steps.append((seconds, step))
            slots[index].window = Self.adding(slots[index].window, step)
            // Drop the steps that ended before the window's start; keep a full window.
            while let first = slots[index].steps.first, seconds - first.end >= window {
                slots[index].window = slots[index].window.subtracting(first.reading)
                slots[index].steps.removeFirst()
            }
            let start = slots[index].steps.first.map { _ in seconds - window } ?? seconds
            guard seconds >= window, reading.measured else { continue }
            if let breach = judge(index, from: max(0, start), to: seconds, final: false), threshold.abortOnFail,
                seconds >= threshold.delayAbortEval.seconds, abort == nil
            {
                abort = breach
            }
        }
        return abort
    }

    /// Judges the final snapshot: a windowed threshold whose run was shorter than one window is judged once, over
    /// the whole run.
    public mutating func finish(_ snapshot: MetricsSnapshot, at seconds: Double) {
        _ = observe(snapshot, at: seconds)
        for index in slots.indices
        where slots[index].threshold.window != nil && slots[index].record.judged == 0 && previous[index].measured {
            _ = judge(index, from: 0, to: seconds, final: true)
        }
    }

    /// Judges the current window of slot `index`; returns its breach when it failed. `final` judges the whole of
    /// a run shorter than one window, whatever it holds.
    private mutating func judge(_ index: Int, from start: Double, to end: Double, final: Bool) -> Breach? {
        let threshold = slots[index].threshold
        let window = slots[index].window
        guard final || threshold.metric.isJudgeable(window) else {
            // A percentile window with no sample while bots stayed connected the whole time is a stall, and fails;
            // one with no bot (the ramp up, the ramp down) or a rate over too few events is not judged.
            guard case .percentile = threshold.metric, slots[index].steps.allSatisfy({ $0.reading.bots > 0 }) else {
                return nil
            }
            slots[index].record.judged += 1
            return failed(index, from: start, to: end, value: nil)
        }
        guard let value = threshold.metric.value(of: window) else { return nil }
        slots[index].record.judged += 1
        let worse: Bool
        switch threshold.comparison {
        case .less, .lessOrEqual: worse = value > (slots[index].record.worst ?? -.infinity)
        case .greater, .greaterOrEqual: worse = value < (slots[index].record.worst ?? .infinity)
        case .equal, .notEqual: worse = !threshold.holds(value) || slots[index].record.worst == nil
        }
        if worse { slots[index].record.worst = value }
        guard !threshold.holds(value) else { return nil }
        return failed(index, from: start, to: end, value: value)
    }

    /// Records a failed window of slot `index` (the first one kept) and returns its breach.
    private mutating func failed(_ index: Int, from start: Double, to end: Double, value: Double?) -> Breach {
        slots[index].record.failed += 1
        let breach = Breach(
            threshold: slots[index].threshold.description, atSeconds: end, windowStartSeconds: start,
            windowEndSeconds: end, value: value)
        if slots[index].record.firstFailure == nil { slots[index].record.firstFailure = breach }
        return breach
    }

    private static func adding(_ a: ThresholdReading, _ b: ThresholdReading) -> ThresholdReading {
        var sum = a
        sum.numerator &+= b.numerator
        sum.denominator &+= b.denominator
        if let extra = b.distribution {
            if sum.distribution == nil { sum.distribution = extra } else { sum.distribution!.add(extra) }
        }
        return sum
    }
}
