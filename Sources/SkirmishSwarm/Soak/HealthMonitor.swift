import Foundation
import SkirmishScript

/// The soak's health invariants as a value: fed one ``HealthSample`` per check, it returns the verdicts.
///
/// Pure and deterministic — time is in the samples, nothing is read here — so every rule is tested with made-up
/// series. Memory stays bounded over any run length: past ``capacity`` samples every other one is dropped (the first
/// and the latest are kept), which keeps the shape of the series for the flatness fit.
package struct HealthMonitor: Sendable {
    package let policy: HealthPolicy
    /// The most samples kept.
    package let capacity: Int
    /// The samples kept, oldest first.
    package private(set) var samples: [HealthSample] = []
    /// Collector outages seen so far, oldest first.
    package private(set) var outages: [CollectorOutage] = []
    /// The first sample (resources at the start).
    package private(set) var first: HealthSample?
    /// The latest sample.
    package private(set) var latest: HealthSample?
    /// The highest resident memory and descriptor counts seen.
    package private(set) var peakResidentBytes: UInt64?
    package private(set) var peakOpenFiles: Int?
    /// Intervals after warm-up with a lateness figure, and how many of them were over the budget.
    package private(set) var latenessIntervals = 0
    package private(set) var latenessOverBudget = 0
    /// The latest verdicts.
    package private(set) var verdicts: [HealthVerdict] = []

    package init(policy: HealthPolicy, capacity: Int = 400) {
        self.policy = policy
        self.capacity = max(8, capacity)
    }

    /// Whether no check has failed (pending and warnings do not fail a run).
    package var passed: Bool { !verdicts.contains { $0.status == .fail } }

    /// Takes one sample (samples must come in time order) and returns every check's verdict.
    @discardableResult
    package mutating func record(_ sample: HealthSample) -> [HealthVerdict] {
        let previous = latest
        if first == nil { first = sample }
        latest = sample
        if let bytes = sample.residentBytes { peakResidentBytes = max(peakResidentBytes ?? 0, bytes) }
        if let files = sample.openFiles { peakOpenFiles = max(peakOpenFiles ?? 0, files) }
        if sample.seconds >= policy.warmUp, inSteadyWindow(sample), let lateness = sample.tickLatenessP99 {
            latenessIntervals += 1
            if lateness > policy.latenessBudget { latenessOverBudget += 1 }
        }
        trackCollector(previous: previous, sample: sample)
        samples.append(sample)
        if samples.count > capacity {
            let last = samples.count - 1
            samples = samples.enumerated().filter { $0.offset % 2 == 0 || $0.offset == last }.map(\.element)
        }
        verdicts = judge()
        return verdicts
    }

    // MARK: Checks

    private func judge() -> [HealthVerdict] {
        var result = [
            flatness(.memory, tolerance: policy.memory, unit: .bytes) { $0.residentBytes.map { Double($0) } },
            flatness(.openFiles, tolerance: policy.openFiles, unit: .count) { $0.openFiles.map { Double($0) } },
            desyncs(), errorBudget(), tickLateness(),
        ]
        if let collector = collector() { result.append(collector) }
        return result
    }

    private func inSteadyWindow(_ sample: HealthSample) -> Bool {
        sample.seconds >= policy.warmUp && sample.seconds <= (policy.steadyUntil ?? .infinity)
    }

    private enum Unit { case bytes, count }

    private func flatness(
        _ check: HealthVerdict.Check, tolerance: HealthPolicy.Tolerance, unit: Unit,
        value: (HealthSample) -> Double?
    ) -> HealthVerdict {
        let points = samples.filter(inSteadyWindow).compactMap { sample in value(sample).map { (sample.seconds, $0) } }
        let name = check == .memory ? "RSS" : "open files"
        guard let latest, value(latest) != nil || points.count > 0 else {
            return HealthVerdict(check: check, status: .pending, detail: "\(name) cannot be read on this system")
        }
        let span = (points.last?.0 ?? 0) - (points.first?.0 ?? 0)
        guard points.count >= policy.minimumSamples, span >= policy.minimumSpan,
            let trend = Trend(points.map { (t: $0.0, value: $0.1) })
        else {
            let wait =
                latest.seconds < policy.warmUp
                ? "warming up until \(Self.clock(policy.warmUp))"
                : "\(points.count) of \(policy.minimumSamples) samples after warm-up"
            return HealthVerdict(check: check, status: .pending, detail: "\(name): \(wait)")
        }
        let allowed = tolerance.allowed(atLevel: trend.level)
        let passed = trend.growth <= allowed
        let show = { (amount: Double) in Self.show(amount, unit) }
        let start = points.first.map { show($0.1) } ?? "?"
        let end = points.last.map { show($0.1) } ?? "?"
        let perHour = trend.slopePerSecond * 3_600
        let detail =
            "\(name) \(start) → \(end) after warm-up; trend \(perHour >= 0 ? "+" : "")\(show(perHour))/h, "
            + "\(trend.growth >= 0 ? "+" : "")\(show(trend.growth)) over \(Self.clock(trend.span)) "
            + "(allowed +\(show(allowed)))"
        return HealthVerdict(
            check: check, status: passed ? .pass : .fail, observed: trend.growth, limit: allowed, detail: detail)
    }

    private func desyncs() -> HealthVerdict {
        guard let latest else { return HealthVerdict(check: .desyncs, status: .pending, detail: "no sample yet") }
        let rate = Double(latest.desyncs) / Double(max(latest.matchesCompleted, 1))
        let passed = latest.desyncs == 0 || rate <= policy.maxDesyncRate
        return HealthVerdict(
            check: .desyncs, status: passed ? .pass : .fail, observed: rate, limit: policy.maxDesyncRate,
            detail: "\(latest.desyncs) desyncs in \(latest.matchesCompleted) completed matches")
    }

    private func errorBudget() -> HealthVerdict {
        guard let latest, latest.handshakes > 0 else {
            return HealthVerdict(check: .errorBudget, status: .pending, detail: "no handshake attempted yet")
        }
        let rate = Double(latest.errors) / Double(latest.handshakes)
        return HealthVerdict(
            check: .errorBudget, status: rate <= policy.errorBudget ? .pass : .fail, observed: rate,
            limit: policy.errorBudget,
            detail: String(
                format: "%llu errors per %llu handshakes = %.3f%% (budget %.3f%%)", latest.errors, latest.handshakes,
                rate * 100, policy.errorBudget * 100))
    }

    private func tickLateness() -> HealthVerdict {
        guard latenessIntervals > 0 else {
            return HealthVerdict(
                check: .tickLateness, status: .pending, detail: "no scheduled input measured after warm-up yet")
        }
        let allowed = max(1, Int((policy.latenessAllowance * Double(latenessIntervals)).rounded(.down)))
        let share = Double(latenessOverBudget) / Double(latenessIntervals)
        return HealthVerdict(
            check: .tickLateness, status: latenessOverBudget <= allowed ? .pass : .fail, observed: share,
            limit: Double(allowed) / Double(latenessIntervals),
            detail: String(
                format: "p99 over %.1f ms in %d of %d intervals after warm-up (at most %d allowed)",
                policy.latenessBudget * 1_000, latenessOverBudget, latenessIntervals, allowed))
    }

    private func collector() -> HealthVerdict? {
        guard let latest, let pushes = latest.exporterPushes, let failures = latest.exporterFailures else {
            return nil
        }
        guard !outages.isEmpty else {
            return HealthVerdict(
                check: .collector, status: .pass, observed: Double(failures),
                detail: "\(pushes) pushes accepted, \(failures) failed attempts, no outage")
        }
        let listed = outages.map { outage in
            "\(Self.clock(outage.from))–\(outage.ongoing ? "now" : Self.clock(outage.to)) "
                + "(\(outage.failures) failures)"
        }
        return HealthVerdict(
            check: .collector, status: .warn, observed: Double(failures),
            detail: "collector outage\(outages.count > 1 ? "s" : ""): \(listed.joined(separator: ", ")); "
                + "\(pushes) pushes accepted in all. Counters are cumulative: the next push that lands carries every "
                + "total, and summary.json has them all")
    }

    /// An interval in which pushes failed and none landed starts or extends an outage; one in which a push landed
    /// ends it.
    private mutating func trackCollector(previous: HealthSample?, sample: HealthSample) {
        guard let failures = sample.exporterFailures, let pushes = sample.exporterPushes else { return }
        let failedBefore = previous?.exporterFailures ?? 0
        let pushedBefore = previous?.exporterPushes ?? 0
        let newFailures = failures &- min(failedBefore, failures)
        let landed = pushes > pushedBefore
        if let last = outages.indices.last, outages[last].ongoing {
            outages[last].to = sample.seconds
            outages[last].failures &+= newFailures
            if landed { outages[last].ongoing = false }
        } else if newFailures > 0, !landed {
            outages.append(
                CollectorOutage(
                    from: previous?.seconds ?? 0, to: sample.seconds, failures: newFailures, ongoing: true))
        }
    }

    // MARK: Formatting

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole < 120 { return "\(whole) s" }
        if whole < 7_200 { return String(format: "%.1f min", seconds / 60) }
        return String(format: "%.2f h", seconds / 3_600)
    }

    private static func show(_ amount: Double, _ unit: Unit) -> String {
        switch unit {
        case .count: return String(format: "%.0f", amount)
        case .bytes:
            let size = abs(amount)
            if size >= 1_073_741_824 { return String(format: "%.2f GiB", amount / 1_073_741_824) }
            if size >= 1_048_576 { return String(format: "%.1f MiB", amount / 1_048_576) }
            return String(format: "%.0f KiB", amount / 1_024)
        }
    }
}
