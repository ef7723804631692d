import SkirmishScript
import SkirmishTelemetry

/// The cumulative figures one threshold is computed from, read from a merged snapshot of the legitimate personas.
///
/// Readings subtract: the reading at the end of a window minus the reading at its start is the window, so a
/// threshold is judged the same way over the whole run, over the run so far, and over any sliding window.
struct ThresholdReading: Sendable, Equatable {
    /// The distribution a percentile is taken from (`nil` for counts and rates).
    var distribution: SparseDistribution?
    /// A count, or a rate's numerator.
    var numerator: UInt64 = 0
    /// A rate's denominator (unused for counts and percentiles).
    var denominator: UInt64 = 0
    /// Bots connected when the reading was taken (a level, not a total: never subtracted).
    var bots: Double = 0
    /// Whether any legitimate persona had a series of the figure when the reading was taken: without one the
    /// figure is not measured (its count reads 0 and its distribution is missing, and neither means anything).
    var measured = true

    /// The figures recorded after `earlier` (an older reading of the same threshold).
    func subtracting(_ earlier: ThresholdReading) -> ThresholdReading {
        ThresholdReading(
            distribution: distribution.map { current in earlier.distribution.map { current.subtracting($0) } ?? current
            },
            numerator: numerator - min(numerator, earlier.numerator),
            denominator: denominator - min(denominator, earlier.denominator), bots: bots, measured: measured)
    }
}

extension ThresholdMetric {
    /// What this metric is computed from, in `reader`'s snapshot, with the bots connected then.
    func reading(_ reader: SnapshotReader) -> ThresholdReading {
        var reading = figures(reader)
        reading.bots = reader.gauge(SkirmishMetrics.botsConnected)
        reading.measured = isMeasured(by: reader)
        return reading
    }

    /// The figure this metric reads when a protocol or behaviour may not measure it; `nil` for what every run
    /// measures (errors, handshake outcomes, reconnects, the exporter's failures).
    var figure: RunFigure? {
        switch self {
        case .percentile(let histogram, _):
            switch histogram {
            case .rtt: .rtt
            case .snapshotAge: .snapshotAge
            case .tickLateness: .tickLateness
            case .handshake: .handshake
            case .reconnect: nil
            case .predictionError: .prediction
            }
        case .count(let count):
            switch count {
            case .desyncs: .desyncs
            case .mispredictions: .prediction
            case .packetsLost: .loss
            case .resends: .resends
            case .matchesStarted, .matchesCompleted: .matches
            case .checksFailed: .checks
            case .errors, .reconnects, .handshakeFailures, .exporterFailures: nil
            }
        case .rate(let rate):
            switch rate {
            case .packetLossRate: .loss
            case .onTimeSendRate: .tickLateness
            case .replyRate: .rtt
            case .checkFailureRate: .checks
            case .handshakeFailureRate, .errorRate: nil
            }
        }
    }

    /// Whether any legitimate persona in `reader`'s snapshot measures the figure: a threshold on a figure no persona
    /// measures is not judged, and fails the run as "not measured" rather than passing on a 0 nobody counted.
    func isMeasured(by reader: SnapshotReader) -> Bool {
        guard let figure else { return true }
        return reader.measures(figure)
    }

    /// Whether a reading holds enough to be judged while the run lasts: a rate over fewer than 20 events (pings
    /// still in flight, the first handshakes) says nothing yet; a percentile needs one sample, a count none.
    func isJudgeable(_ reading: ThresholdReading) -> Bool {
        switch self {
        case .percentile: (reading.distribution?.total ?? 0) > 0
        case .count: true
        case .rate: reading.denominator >= 20
        }
    }

    private func figures(_ reader: SnapshotReader) -> ThresholdReading {
        switch self {
        case .percentile(let histogram, _):
            return ThresholdReading(
                distribution: reader.histogram(histogram.family).map(SparseDistribution.init))
        case .count(let count):
            let total: UInt64 =
                switch count {
                case .desyncs: reader.total(SkirmishMetrics.desyncs)
                case .mispredictions: reader.total(SkirmishMetrics.mispredictions)
                case .errors: reader.total(SkirmishMetrics.errors)
                case .reconnects: reader.total(SkirmishMetrics.reconnects)
                case .packetsLost: reader.total(SkirmishMetrics.packetsLost)
                case .resends: reader.total(SkirmishMetrics.reliableResends)
                case .matchesStarted: reader.total(SkirmishMetrics.matchesStarted)
                case .matchesCompleted: reader.total(SkirmishMetrics.matchesCompleted)
                case .handshakeFailures: reader.total(SkirmishMetrics.handshakes, where: ["outcome": "failed"])
                case .exporterFailures: reader.snapshot.counterTotal(SkirmishMetrics.exporterFailures)
                case .checksFailed: reader.total(SkirmishMetrics.checksFailed)
                }
            return ThresholdReading(numerator: total)
        case .rate(let rate):
            switch rate {
            case .handshakeFailureRate, .errorRate:
                let ok = reader.total(SkirmishMetrics.handshakes, where: ["outcome": "ok"])
                let failed = reader.total(SkirmishMetrics.handshakes, where: ["outcome": "failed"])
                let numerator = rate == .errorRate ? reader.total(SkirmishMetrics.errors) : failed
                return ThresholdReading(numerator: numerator, denominator: ok &+ failed)
            case .packetLossRate:
                let lost = reader.total(SkirmishMetrics.packetsLost)
                return ThresholdReading(
                    numerator: lost, denominator: reader.total(SkirmishMetrics.packetsReceived) &+ lost)
            case .onTimeSendRate:
                let onTime = reader.total(SkirmishMetrics.inputs, where: ["timing": "on_time"])
                let late = reader.total(SkirmishMetrics.inputs, where: ["timing": "late"])
                return ThresholdReading(numerator: onTime, denominator: onTime &+ late)
            case .replyRate:
                return ThresholdReading(
                    numerator: reader.total(SkirmishMetrics.pings, where: ["direction": "answered"]),
                    denominator: reader.total(SkirmishMetrics.pings, where: ["direction": "sent"]))
            case .checkFailureRate:
                return ThresholdReading(
                    numerator: reader.total(SkirmishMetrics.checksFailed),
                    denominator: reader.total(SkirmishMetrics.checks))
            }
        }
    }

    /// The figure judged from `reading`; `nil` when it holds no sample (no ping answered, no input sent, …).
    func value(of reading: ThresholdReading) -> Double? {
        switch self {
        case .percentile(_, let quantile):
            return reading.distribution?.quantile(quantile)
        case .count:
            return Double(reading.numerator)
        case .rate(let rate):
            let fraction = reading.denominator == 0 ? nil : Double(reading.numerator) / Double(reading.denominator)
            switch rate {
            // No handshake, no packet, no check: nothing failed.
            case .handshakeFailureRate, .errorRate, .packetLossRate, .checkFailureRate: return fraction ?? 0
            case .onTimeSendRate: return fraction
            case .replyRate: return fraction.map { min(1, $0) }
            }
        }
    }
}

extension ThresholdMetric.Histogram {
    /// The metric family this percentile is read from.
    var family: MetricFamily {
        switch self {
        case .rtt: SkirmishMetrics.rtt
        case .snapshotAge: SkirmishMetrics.snapshotAge
        case .tickLateness: SkirmishMetrics.tickLateness
        case .handshake: SkirmishMetrics.handshake
        case .reconnect: SkirmishMetrics.reconnect
        case .predictionError: SkirmishMetrics.predictionError
        }
    }
}
