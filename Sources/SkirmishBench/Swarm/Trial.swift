import Foundation
import SkirmishNet
import SkirmishSwarm
import SkirmishTelemetry

/// One run of `skirmish swarm` against the bench server, and what it measured.
package struct Trial: Sendable {
    package enum Kind: String, Sendable { case baseline, sustained, idle }

    package var kind: Kind
    package var bots: Int
    /// `nil` when the swarm wrote none (it had to be killed).
    package var summary: RunSummary?
    /// Whether the swarm ended by itself within its planned time plus a margin.
    package var finishedInTime: Bool
    /// Packets the server sent during the trial (its own counter).
    package var serverSent: Double
    package var rateLimited: Double
    package var serverLateTicks: Double
    package var serverSessionsPeak: Int
    package var kernelDrops: UInt64
    /// Of those, dropped at the server's own socket (inputs the server never read).
    package var serverSocketDrops: UInt64
    /// Share of one core over the hold.
    package var swarmCPU: Double
    /// The part of ``swarmCPU`` spent in the kernel (system time: sending, receiving, polling its sockets).
    package var swarmKernelCPU: Double = 0
    package var serverCPU: Double
    package var peakKiB: Int
    package var exitStatus: Int32

    package var onTime: Double? { summary?.onTimeSendRate }
    package var latenessP99: Double? { summary?.latency.tickLateness?.p99 }
    /// Replies received: the smaller of Pings answered by a Pong and snapshots arrived (the gaps in their numbering
    /// count as lost), both as the bots saw them.
    package var replies: Double {
        guard let summary else { return 0 }
        let packets = summary.packets
        let heard = packets.received + (packets.lost ?? 0)
        let arrived = heard == 0 ? 0 : Double(packets.received) / Double(heard)
        return min(summary.replyRate ?? 0, arrived)
    }
    /// Packets the bots received ÷ packets the server sent: also counts what was still in flight to a bot that had
    /// just left its match, so it is shown, not judged.
    package var delivered: Double {
        guard let summary, serverSent > 0 else { return 0 }
        return min(1, Double(summary.packets.received) / serverSent)
    }
    package var errors: UInt64 { summary?.errors.values.reduce(0, +) ?? 0 }
    /// The most bots connected at once, from the swarm's once-a-second timeline.
    package var connectedPeak: Int { Int(summary?.timeline?.points.map(\.bots).max() ?? 0) }
    /// Bots one whole core would drive at this trial's cost per bot.
    package var botsPerCore: Double { swarmCPU > 0.01 ? Double(bots) / swarmCPU : 0 }

    /// The swarm's CPU time per bot-tick (one 30 Hz input out, one snapshot in, and everything around them), in µs.
    package var microsecondsPerBotTick: Double { bots > 0 ? swarmCPU * 1e6 / (Double(bots) * 30) : 0 }

    /// The kernel's part of ``microsecondsPerBotTick``: the datagram's way through the network stack, each way.
    ///
    /// A plain C client pays nearly only this (≈ 96 % of its CPU is kernel time), so it is the floor a swarm's
    /// per-bot-tick cost can approach; what lies above it is the swarm's own work in user space.
    package var kernelMicrosecondsPerBotTick: Double {
        bots > 0 ? swarmKernelCPU * 1e6 / (Double(bots) * 30) : 0
    }

    /// Which process ran out of CPU first: the one above 90 % of its core (the swarm when both are) — except that a
    /// server near its core's limit whose socket overflowed while the swarm kept its schedule (sends on time, lateness
    /// within bounds) set the limit, however busy the swarm was: the replies it lacked were never sent.
    package var saturated: String? {
        Self.saturation(
            swarmCPU: swarmCPU, serverCPU: serverCPU, serverSocketDrops: serverSocketDrops,
            swarmKeptSchedule: (onTime ?? 0) >= 0.99 && (latenessP99 ?? 1) < 0.005)
    }

    /// ``saturated`` from its inputs.
    package static func saturation(
        swarmCPU: Double, serverCPU: Double, serverSocketDrops: UInt64, swarmKeptSchedule: Bool
    ) -> String? {
        if serverCPU >= 0.9, serverSocketDrops > 0, swarmKeptSchedule {
            return "the server (\(Int((serverCPU * 100).rounded())) % of its core; its socket dropped "
                + "\(serverSocketDrops) datagrams while the swarm kept its schedule)"
        }
        if swarmCPU >= 0.9 { return "the swarm (\(Int((swarmCPU * 100).rounded())) % of its core)" }
        if serverCPU >= 0.9 { return "the server (\(Int((serverCPU * 100).rounded())) % of its core)" }
        return nil
    }

    /// What failed, in words; empty when the trial passed.
    package var limit: String {
        var reasons: [String] = []
        switch kind {
        case .sustained:
            if (onTime ?? 0) < 0.99 { reasons.append("on-time sends \(percent(onTime))") }
            if (latenessP99 ?? 1) >= 0.005 { reasons.append("lateness p99 \(milliseconds(latenessP99))") }
            if replies < 0.99 { reasons.append("replies \(percent(replies))") }
        case .idle, .baseline:
            if connectedPeak < bots { reasons.append("at most \(connectedPeak) connected at once") }
        }
        if let summary, summary.handshakes.failed > 0 {
            reasons.append("\(summary.handshakes.failed) handshakes failed")
        }
        if Double(errors) > Double(bots) / 1_000 { reasons.append("\(errors) errors") }
        if let summary, summary.handshakes.succeeded < UInt64(bots) {
            reasons.append("\(summary.handshakes.succeeded) handshakes")
        }
        if !finishedInTime { reasons.append("the swarm did not stop on time and was stopped by a signal") }
        if summary == nil { reasons.append("no summary") }
        if ![0, 99].contains(exitStatus) { reasons.append("exit status \(exitStatus)") }
        return reasons.joined(separator: ", ")
    }

    package var passed: Bool { limit.isEmpty }

    package func kibPerBot(baseKiB: Int) -> Double { Double(max(0, peakKiB - baseKiB)) / Double(max(bots, 1)) }

    package static let header =
        pad("bots", 7, left: true) + pad("on time", 9, left: true) + pad("late p99", 10, left: true)
        + pad("replies", 9, left: true) + pad("delivered", 10, left: true) + pad("swarm cpu", 10, left: true)
        + pad("bots/core", 10, left: true) + pad("µs/tick", 8, left: true) + pad("kernel", 8, left: true)
        + pad("server cpu", 11, left: true)
        + pad("RSS MiB", 9, left: true) + pad("KiB/bot", 8, left: true) + "  verdict"

    package func row(baseKiB: Int) -> String {
        var notes: [String] = []
        if let summary, errors > 0 {
            notes.append("errors: " + summary.errors.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if kernelDrops > 0 {
            notes.append("kernel dropped \(kernelDrops) datagrams machine-wide, \(serverSocketDrops) at the server")
        }
        if rateLimited > 0 { notes.append("server rate-limited \(Int(rateLimited))") }
        if serverLateTicks > 0 { notes.append("server fell behind \(Int(serverLateTicks)) ticks") }
        return pad("\(bots)", 7, left: true) + pad(percent(onTime), 9, left: true)
            + pad(milliseconds(latenessP99), 10, left: true) + pad(percent(replies), 9, left: true)
            + pad(percent(delivered), 10, left: true)
            + pad("\(Int((swarmCPU * 100).rounded())) %", 10, left: true)
            + pad("\(Int(botsPerCore.rounded()))", 10, left: true)
            + pad(fixed(microsecondsPerBotTick, 2), 8, left: true)
            + pad(fixed(kernelMicrosecondsPerBotTick, 2), 8, left: true)
            + pad("\(Int((serverCPU * 100).rounded())) %", 11, left: true)
            + pad(fixed(Double(peakKiB) / 1_024, 1), 9, left: true)
            + pad(fixed(kibPerBot(baseKiB: baseKiB), 2), 8, left: true)
            + "  " + (passed ? "pass" : "FAIL: \(limit)")
            + (notes.isEmpty ? "" : " (\(notes.joined(separator: "; ")))")
    }

    private func percent(_ value: Double?) -> String { value.map { fixed($0 * 100, 2) + "%" } ?? "—" }
    private func milliseconds(_ value: Double?) -> String { value.map { fixed($0 * 1_000, 2) + " ms" } ?? "—" }
}
