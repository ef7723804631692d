import Foundation
import Logging

/// The exporter's shared state and thread bodies.
///
/// `@unchecked Sendable` is safe because every stored `var` is read and written only while `condition` is
/// locked (each method takes the lock before touching them and releases it around blocking work: collecting,
/// rendering and HTTP); the `let`s are immutable values or `Sendable`.
final class ExporterCore: @unchecked Sendable {
    private enum State {
        case idle, running, stopping, stopped
    }

    private let targets: [PushTarget]
    private let endpoints: [String]
    private let source: any MetricsSource
    private let interval: Duration
    private let configuration: ExporterConfiguration
    private let constantLabels: Labels
    private let clock = ContinuousClock()
    private let condition = NSCondition()

    private var state = State.idle
    private var finalPush = true
    private var collectRequested = false
    private var queues: [[[UInt8]]]
    private var closing = false
    private var closingDeadline: ContinuousClock.Instant?
    private var threadsAlive = 0
    private var stats = ExporterStats()
    private var random: UInt64
    private let logger: Logger
    /// Per target: when its current outage began (`nil` while pushes land) and the payloads held back since — the one
    /// whose push failed first and those collected after it — whose totals the first push that lands again carries
    /// (values are cumulative).
    private var outages: [(since: ContinuousClock.Instant, collected: Int)?]

    init(
        targets: [PushTarget],
        source: any MetricsSource,
        interval: Duration,
        runID: String,
        shard: String,
        configuration: ExporterConfiguration,
        logger: Logger
    ) {
        var logger = logger
        if logger[metadataKey: "run"] == nil { logger[metadataKey: "run"] = "\(runID)" }
        if logger[metadataKey: "shard"] == nil { logger[metadataKey: "shard"] = "\(shard)" }
        self.logger = logger
        self.outages = Array(repeating: nil, count: targets.count)
        self.targets = targets
        self.endpoints = targets.map { $0.endpoint(runID: runID, shard: shard) }
        self.source = source
        self.interval = interval
        self.configuration = configuration
        self.constantLabels = ["run": runID, "shard": shard]
        self.queues = Array(repeating: [], count: targets.count)
        // Jitter only spreads retries; seed it from the run so shards of one run spread differently.
        var seed: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (runID + "/" + shard).utf8 { seed = (seed ^ UInt64(byte)) &* 0x100_0000_01b3 }
        self.random = seed
    }

    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard state == .idle else { return }
        state = .running
        logger.info(
            "exporter started",
            metadata: [
                "targets": "\(targets.map(\.name).joined(separator: ","))",
                "interval.seconds": "\(interval.components.seconds)",
                "queue.capacity": "\(configuration.queueCapacity)",
            ])
        threadsAlive = 1 + targets.count
        let ticker = Thread { [self] in runTicker() }
        ticker.name = "skirmish-exporter"
        ticker.start()
        for index in targets.indices {
            let worker = Thread { [self] in runWorker(index) }
            worker.name = "skirmish-exporter-\(index)"
            worker.start()
        }
    }

    func requestCollection() {
        condition.lock()
        collectRequested = true
        condition.broadcast()
        condition.unlock()
    }

    func stop(finalPush: Bool) {
        condition.lock()
        defer { condition.unlock() }
        switch state {
        case .idle:
            state = .stopped
            return
        case .stopping, .stopped:
            return
        case .running:
            break
        }
        state = .stopping
        self.finalPush = finalPush
        condition.broadcast()
        let longestTimeout = targets.map(\.timeout).max() ?? .zero
        let deadline = clock.now + configuration.finalPushTimeout + longestTimeout + .seconds(1)
        while threadsAlive > 0 && clock.now < deadline { wait(until: deadline) }
        state = .stopped
        logger.info(
            "exporter stopped",
            metadata: [
                "pushes": "\(stats.pushesByTarget.values.reduce(0, +))",
                "failures": "\(stats.failures.values.reduce(0, +))",
                "final.push": "\(finalPush)",
            ])
    }

    func currentStats() -> ExporterStats {
        condition.lock()
        defer { condition.unlock() }
        return stats
    }

    func waitForStats(timeout: Duration, until predicate: (ExporterStats) -> Bool) -> Bool {
        let deadline = clock.now + timeout
        condition.lock()
        defer { condition.unlock() }
        while !predicate(stats) {
            if clock.now >= deadline { return false }
            wait(until: deadline)
        }
        return true
    }

    // MARK: - Ticker

    private func runTicker() {
        condition.lock()
        var next = clock.now + interval
        while state == .running {
            if collectRequested || clock.now >= next {
                collectRequested = false
                condition.unlock()
                collectAndEnqueue()
                condition.lock()
                next = clock.now + interval
            } else {
                wait(until: next)
            }
        }
        let sendFinal = finalPush
        condition.unlock()
        if sendFinal { collectAndEnqueue() }
        condition.lock()
        closing = true
        closingDeadline = clock.now + configuration.finalPushTimeout
        threadsAlive -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Collects, adds the exporter's own series, renders one payload per target and queues them.
    private func collectAndEnqueue() {
        var snapshot = source.collect()
        condition.lock()
        let own = stats.series(constantLabels: constantLabels, targets: targets.map(\.name))
        condition.unlock()
        for item in own { snapshot.insert(item) }
        var rendered: [PushTarget.Payload: [UInt8]] = [:]
        for target in targets where rendered[target.payload] == nil {
            rendered[target.payload] = target.render(snapshot)
        }
        condition.lock()
        for (index, target) in targets.enumerated() {
            if outages[index] != nil { outages[index]!.collected += 1 }
            queues[index].append(rendered[target.payload] ?? [])
            if queues[index].count > configuration.queueCapacity {
                queues[index].removeFirst()
                stats.failures[ExporterStats.FailureKey(target: target.name, reason: "dropped"), default: 0] += 1
            }
        }
        condition.broadcast()
        condition.unlock()
    }

    // MARK: - Workers

    private func runWorker(_ index: Int) {
        let client = HTTPClient()
        let target = targets[index]
        var failuresInARow = 0
        // Log lines are written with the lock released: a stalled stderr (a full pipe to a log collector) must not
        // hold up `stats`, which the progress line reads, nor the other targets.
        var gaveUp = false
        condition.lock()
        while true {
            while queues[index].isEmpty && !closing { condition.wait() }
            if queues[index].isEmpty { break }
            if closing, let closingDeadline, clock.now >= closingDeadline {
                stats.failures[ExporterStats.FailureKey(target: target.name, reason: "gave_up"), default: 0] += 1
                stats.lastError = "\(target.name): the final push did not land within the shutdown window"
                gaveUp = true
                break
            }
            let payload = queues[index][0]
            var timeout = target.timeout
            if closing, let closingDeadline {
                timeout = min(timeout, max(.milliseconds(1), closingDeadline - clock.now))
            }
            condition.unlock()
            let outcome = client.send(
                method: target.method, url: endpoints[index], body: payload, contentType: target.format.contentType,
                auth: target.auth, timeout: timeout)
            condition.lock()
            var line: (level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata)?
            switch outcome {
            case .accepted:
                stats.pushesByTarget[target.name, default: 0] += 1
                stats.failing[target.name] = nil
                queues[index].removeFirst()
                if let outage = outages[index] {
                    outages[index] = nil
                    let seconds = outage.since.duration(to: clock.now)
                    line = (
                        .info, "collector recovered",
                        [
                            "target": "\(target.name)", "failed.attempts": "\(failuresInARow)",
                            "outage.seconds": "\(Self.seconds(seconds))",
                            "buffered.points": "\(outage.collected)",
                        ]
                    )
                }
                failuresInARow = 0
            case .failed(let reason, let detail):
                stats.failures[ExporterStats.FailureKey(target: target.name, reason: reason), default: 0] += 1
                stats.lastError = "\(target.name): \(detail)"
                failuresInARow += 1
                stats.failing[target.name] = ExporterStats.Streak(attempts: failuresInARow, reason: reason)
                if outages[index] == nil {
                    // The payload that just failed is the outage's first point held back.
                    outages[index] = (clock.now, 1)
                    line = (
                        .warning, "collector unreachable: keeping the latest points and retrying with backoff",
                        ["target": "\(target.name)", "reason": "\(reason)", "error": "\(detail)"]
                    )
                }
                if let pending = line {
                    line = nil
                    condition.unlock()
                    logger.log(level: pending.level, pending.message, metadata: pending.metadata)
                    condition.lock()
                }
                if queues[index].count == 1 { backOff(index, failuresInARow: failuresInARow) }
                // A newer payload carries every cumulative total: the failed one is superseded.
                if queues[index].count > 1 { queues[index].removeFirst() }
            }
            condition.broadcast()
            if let pending = line {
                condition.unlock()
                logger.log(level: pending.level, pending.message, metadata: pending.metadata)
                condition.lock()
            }
        }
        threadsAlive -= 1
        condition.broadcast()
        condition.unlock()
        if gaveUp {
            logger.warning(
                "final push gave up: the collector did not accept it within the shutdown window",
                metadata: [
                    "target": "\(target.name)",
                    "window.seconds": "\(configuration.finalPushTimeout.components.seconds)",
                ])
        }
    }

    /// Waits (lock held) for the retry delay, a newer payload, or the end of the final-push window.
    private func backOff(_ index: Int, failuresInARow: Int) {
        let exponent = min(failuresInARow - 1, 30)
        let uncapped = configuration.backoffBase * Double(UInt64(1) << UInt64(exponent))
        let capped = min(uncapped, configuration.backoffCap)
        let until = clock.now + capped * (0.5 + 0.5 * nextUnitRandom())
        while queues[index].count == 1 && clock.now < until {
            if closing, let closingDeadline, clock.now >= closingDeadline { return }
            wait(until: closing ? min(until, closingDeadline ?? until) : until)
        }
    }

    /// A duration in seconds with millisecond precision, for log fields.
    private static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// SplitMix64 → [0, 1); called with the lock held.
    private func nextUnitRandom() -> Double {
        random &+= 0x9e37_79b9_7f4a_7c15
        var z = random
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        z ^= z >> 31
        return Double(z >> 11) / Double(UInt64(1) << 53)
    }

    /// Waits on the condition until `instant` (lock held); may return early on a broadcast.
    private func wait(until instant: ContinuousClock.Instant) {
        let remaining = clock.now.duration(to: instant)
        guard remaining > .zero else { return }
        let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) * 1e-18
        _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
    }
}
