import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishScript
@testable import SkirmishServer
@testable import SkirmishSwarm

/// Bandwidth per bot and per match, and the server's tick time, from a real swarm against the real server on
/// loopback.
@Suite(.serialized) struct BandwidthTests {
    /// Four Puck chasers sending 30 inputs a second for four seconds (a one-second ramp, then three held).
    static let script = """
        name: bandwidth
        profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 7s}}]
        personas: [{name: chaser, weight: 1, game: puck, behavior: chaser, input_rate: 30hz}]
        """

    @Test func perBotAndPerMatchBandwidthMatchTheBytesCountedAndTickSamplesMatchTicks() async throws {
        let script = try Catalogue.builtIn.scriptLoader.parse(Self.script, file: "bandwidth.yaml")
        let plan = try LoadPlan(script: script, overrides: .init(bots: nil, duration: .seconds(8)))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let server = try await ReferenceServer.start(configuration: ServerConfiguration(), group: group)
        let port = try #require(server.addresses.udp?.port)
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: .udp, host: "127.0.0.1", port: port), seed: 11,
            runID: "bandwidth", loops: 2)
        let swarm = try await Swarm(configuration: configuration, group: group)
        let started = ContinuousClock.now
        let outcome = await swarm.run()
        let elapsed = ContinuousClock.now - started
        let serverSnapshot = try await server.metricsSnapshot()
        await server.shutdown()
        try await group.shutdownGracefully()
        var summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "bandwidth.yaml", startedAt: Date(),
            exporter: nil)
        summary.server = ServerFigures(snapshot: serverSnapshot)

        // Per bot: one sample per connected bot, direction and second (bots × seconds × 2 at most). Each bot is
        // seated for at most the run's length and, once the ramp (1 s) and its handshake are behind it, for most of
        // the hold's 7 s: every bot is sampled at least once each way even on a machine so busy that handshakes take
        // seconds (seen under `make test-under-load` with a 4 s run).
        let bots = 4
        let seconds = elapsed.components.seconds + 1
        let traffic = try #require(summary.botBytesPerSecond)
        #expect(traffic.sent.samples == traffic.received.samples)
        #expect(traffic.sent.samples >= UInt64(bots), "\(traffic.sent.samples) bot-seconds")
        #expect(traffic.sent.samples <= UInt64(bots) * UInt64(seconds), "\(traffic.sent.samples) bot-seconds")
        // The samples add up to the bytes counted, less what no whole second covered (each bot's handshake and the
        // part of a second before it left). A sample covers at least a second, so the samples' sum (bytes over
        // seconds) is at most the bytes counted; and most of each bot's time is covered.
        let snapshot = outcome.snapshot
        let sentHistogram = try #require(
            snapshot.histogram(SkirmishMetrics.botBytesPerSecond, where: ["direction": "sent"]))
        let receivedHistogram = try #require(
            snapshot.histogram(SkirmishMetrics.botBytesPerSecond, where: ["direction": "received"]))
        let bytesSent = Double(summary.packets.bytesSent)
        let bytesReceived = Double(summary.packets.bytesReceived)
        #expect(sentHistogram.sum <= bytesSent + 1 && sentHistogram.sum >= 0.3 * bytesSent, "\(sentHistogram.sum)")
        #expect(
            receivedHistogram.sum <= bytesReceived + 1 && receivedHistogram.sum >= 0.3 * bytesReceived,
            "\(receivedHistogram.sum) of \(bytesReceived)")
        // And each sample is what the packets say a chaser moves in a second: 30 inputs out, 30 snapshots in.
        let input = try Packet(number: 1, .paddleState(PaddleState(inputStep: 1, x: 1, y: 1, vx: 0, vy: 0))).encoded()
        let median = try #require(traffic.sent.p50)
        #expect(median >= 0.5 * Double(30 * input.count) && median <= 1.5 * Double(30 * input.count), "\(median) B/s")
        let snapshotsReceived = Double(summary.packets.receivedByType["TableSnapshot"] ?? 0)
        let snapshotBytes = snapshotsReceived == 0 ? 0 : Double(summary.packets.bytesReceived) / snapshotsReceived
        let receivedMedian = try #require(traffic.received.p50)
        #expect(
            receivedMedian >= 0.5 * 30 * snapshotBytes && receivedMedian <= 1.5 * 30 * snapshotBytes,
            "\(receivedMedian) B/s against \(snapshotBytes) B per snapshot")

        // The server's tick time: one sample per tick it ran, read in one snapshot.
        let ticks = serverSnapshot.counterTotal(SkirmishMetrics.serverTicks)
        let tickTimes = try #require(serverSnapshot.histogram(SkirmishMetrics.serverTickSeconds))
        #expect(ticks > 60)
        #expect(tickTimes.count == ticks)
        // Per match: two seats' snapshots (30 a second each) out, two chasers' inputs in.
        let match = try #require(summary.server?.matchBytesPerSecond?["puck"])
        #expect(match.sent.samples >= 2 && match.sent.samples == match.received.samples)
        let matchSent = try #require(match.sent.p50)
        #expect(matchSent >= 0.5 * 2 * 30 * snapshotBytes && matchSent <= 1.5 * 2 * 30 * snapshotBytes, "\(matchSent)")
        let matchReceived = try #require(match.received.p50)
        #expect(matchReceived >= 0.5 * 2 * 30 * Double(input.count), "\(matchReceived)")

        // The figures reach the table and the report.
        let table = summary.table()
        #expect(table.contains("bandwidth per connected bot: out "), "\(table)")
        #expect(table.contains("server tick: p50 ") && table.contains("bandwidth per match (server): puck out "))
        let report = RunOutput.reportSummary(of: summary)
        let bandwidth = try #require(report.tables.first { $0.title.hasPrefix("Bandwidth") })
        #expect(bandwidth.rows.count == 4, "\(bandwidth.rows)")
    }
}
