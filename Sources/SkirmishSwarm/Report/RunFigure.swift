import SkirmishTelemetry

/// A figure a run may or may not measure, by the name `summary.json` lists it under (a persona's `figures`).
///
/// Whether a persona measured a figure is read from the run's series, not from what its protocol declares: a
/// series exists at 0 from the first push for every figure the protocol or behaviour measures, and one a protocol
/// cannot measure has no series at all (it appears only if something records a value after all). So "absent" and
/// "0" are told apart by the snapshot alone, which is also all a summary rebuilt later can see.
enum RunFigure: String, CaseIterable, Sendable {
    case rtt
    case resends
    case loss
    case handshake
    case snapshotAge = "snapshot_age"
    case snapshotInterval = "snapshot_interval"
    case tickLateness = "tick_lateness"
    case prediction
    case desyncs
    case matches
    case checks

    /// The families whose series show the figure was measured: any one of them is enough.
    var families: [MetricFamily] {
        switch self {
        case .rtt: [SkirmishMetrics.rtt, SkirmishMetrics.pings]
        case .resends: [SkirmishMetrics.reliableResends]
        case .loss: [SkirmishMetrics.packetsLost]
        case .handshake: [SkirmishMetrics.handshake]
        case .snapshotAge: [SkirmishMetrics.snapshotAge]
        case .snapshotInterval: [SkirmishMetrics.snapshotInterval]
        case .tickLateness: [SkirmishMetrics.tickLateness, SkirmishMetrics.inputs]
        case .prediction: [SkirmishMetrics.predictionError, SkirmishMetrics.mispredictions]
        // A protocol that checks state but names no desync part still has the detection-delay series.
        case .desyncs: [SkirmishMetrics.desyncs, SkirmishMetrics.desyncDetection]
        case .matches: [SkirmishMetrics.matchesStarted, SkirmishMetrics.matchesCompleted]
        case .checks: [SkirmishMetrics.checks]
        }
    }

    /// How the figure reads in a sentence: "not measured: round trips, snapshot age".
    var label: String {
        switch self {
        case .rtt: "round trips"
        case .resends: "resends"
        case .loss: "packet loss"
        case .handshake: "handshake time"
        case .snapshotAge: "snapshot age"
        case .snapshotInterval: "snapshot interval"
        case .tickLateness: "tick lateness"
        case .prediction: "prediction error"
        case .desyncs: "desyncs"
        case .matches: "matches"
        case .checks: "checks"
        }
    }
}
