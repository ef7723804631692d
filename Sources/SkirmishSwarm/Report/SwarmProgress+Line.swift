import Foundation
import SkirmishTelemetry

extension SwarmProgress {
    /// One line for the live display: time, bots, packet rates since the previous sample, RTT p99, matches, desyncs,
    /// errors.
    public var line: String {
        let reader = SnapshotReader(snapshot: snapshot, legit: nil)
        let sent = reader.total(SkirmishMetrics.packetsSent)
        let received = reader.total(SkirmishMetrics.packetsReceived)
        var sentRate = 0.0
        var receivedRate = 0.0
        if let (interval, earlier) = previous, interval > .zero {
            let before = SnapshotReader(snapshot: earlier, legit: nil)
            sentRate = Double(sent &- before.total(SkirmishMetrics.packetsSent)) / interval.seconds
            receivedRate = Double(received &- before.total(SkirmishMetrics.packetsReceived)) / interval.seconds
        }
        let rtt = reader.quantile(SkirmishMetrics.rtt, 0.99).map { String(format: "%.1f ms", $0 * 1_000) } ?? "—"
        let clock = String(format: "[%4.0fs/%.0fs]", elapsed.seconds, duration.seconds)
        let rates = String(format: "pkt/s %.0f out %.0f in", sentRate, receivedRate)
        return "\(clock) bots \(bots) | \(rates) | rtt p99 \(rtt) | matches "
            + "\(reader.total(SkirmishMetrics.matchesCompleted)) | desyncs \(reader.total(SkirmishMetrics.desyncs)) | "
            + "errors \(reader.total(SkirmishMetrics.errors))"
    }
}
