import Foundation
import SkirmishScript
import SkirmishTelemetry
import SkirmishWire

extension SwarmProgress {
    /// One line for the live display, most important first (a narrow terminal clips the end): time, bots, desyncs,
    /// errors, RTT p99 and packet rates over the last interval, matches completed, how busy the generator is. A
    /// figure the protocol does not measure reads `—`, never 0.
    public var line: String {
        let reader = SnapshotReader(snapshot: snapshot, legit: nil)
        let sent = reader.total(SkirmishMetrics.packetsSent)
        let received = reader.total(SkirmishMetrics.packetsReceived)
        var sentRate = 0.0
        var receivedRate = 0.0
        var rttNow = snapshot.histogram(SkirmishMetrics.rtt)
        if let (interval, earlier) = previous, interval > .zero {
            let before = SnapshotReader(snapshot: earlier, legit: nil)
            sentRate = Double(sent &- before.total(SkirmishMetrics.packetsSent)) / interval.seconds
            receivedRate = Double(received &- before.total(SkirmishMetrics.packetsReceived)) / interval.seconds
            if let now = rttNow, let then = earlier.histogram(SkirmishMetrics.rtt) { rttNow = now.subtracting(then) }
        }
        let rtt = rttNow?.quantile(0.99).map { String(format: "%.1f ms", $0 * 1_000) } ?? "—"
        let clock = String(format: "[%4.0fs/%.0fs]", elapsed.seconds, duration.seconds)
        let rates = String(format: "pkt/s %.0f out, %.0f in", sentRate, receivedRate)
        // The busiest bot loop's share of its core: near 100 % the generator, not the server, sets the pace.
        let cpu = busiestLoop.map { String(format: " | generator cpu %.0f%%", $0 * 100) } ?? ""
        let desyncs = reader.total(SkirmishMetrics.desyncs, of: .desyncs).map { "\($0)" } ?? "—"
        let matches = reader.total(SkirmishMetrics.matchesCompleted, of: .matches).map { "\($0)" } ?? "—"
        return "\(clock) bots \(bots) | desyncs \(desyncs) | errors \(reader.total(SkirmishMetrics.errors)) | "
            + "rtt p99 \(rtt) | \(rates) | matches \(matches)\(cpu)"
    }
}
