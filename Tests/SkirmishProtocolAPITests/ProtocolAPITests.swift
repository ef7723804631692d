import Foundation
import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishTestSupport
import SkirmishWire
import Testing

/// A user's own protocol, written with the public API alone (this target has no `package` access): a plug-in, two
/// behaviours, a catalogue, and a server for the protocol written in the test — then a swarm of it over UDP and TCP,
/// with link emulation and thresholds, whose every figure is checked against the server's own counts.
@Suite(.serialized) struct ProtocolAPITests {
    static let script = """
        name: keyval-test
        protocol: {name: keyval, silence_timeout: 5s}
        profile: [{ramp: {to: 8, over: 1s}}, {hold: {for: 4s}}]
        personas:
          - {name: writers, behavior: writer, input_rate: 20hz, keys: 50, link: {latency: 10ms, jitter: 2ms}}
          - {name: readers, behavior: reader, input_rate: 20hz, transport: tcp}
        thresholds:
          rtt_p99: "< 1s"
          errors: "== 0"
          checks_failed: "== 0"
        """

    @Test func aSwarmOfItsOwnProtocolIsMeasuredExactlyAsItsServerSawIt() async throws {
        let catalogue = Catalogue.keyValue()
        let script = try catalogue.scriptLoader.parse(Self.script, file: "keyval.yaml")
        #expect(script.protocolName == "keyval")
        #expect(script.personas.map(\.behavior.rawValue) == ["writer", "reader"])

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await KeyValueServer.start(on: group)
        var configuration = SwarmConfiguration(
            script: script, plan: try LoadPlan(script: script),
            target: Target(transport: .udp, host: "127.0.0.1", port: server.udpPort), seed: 3, runID: "keyval",
            loops: 1)
        configuration.alternates = [.tcp: Target(transport: .tcp, host: "127.0.0.1", port: server.tcpPort)]
        configuration.catalogue = catalogue
        let swarm = try await Swarm(configuration: configuration, group: group)
        // What the first push would carry: the swarm's metrics before any bot started.
        let early = await swarm.snapshot()
        let outcome = await swarm.run()
        let snapshot = outcome.snapshot

        func sent(_ type: String) -> Int {
            Int(snapshot.counterTotal(SkirmishMetrics.packetsSent, where: ["type": type]))
        }
        func received(_ type: String) -> Int {
            Int(snapshot.counterTotal(SkirmishMetrics.packetsReceived, where: ["type": type]))
        }
        func bytesSent(_ type: String) -> Int {
            Int(snapshot.counterTotal(SkirmishMetrics.packetBytesSent, where: ["type": type]))
        }
        // The last packets of the run (the goodbyes) reach the server within moments on loopback.
        var counts = server.counts
        let deadline = ContinuousClock.now + .seconds(10)
        while counts.received["bye", default: 0] < sent("bye") || counts.received["put", default: 0] < sent("put"),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
            counts = server.counts
        }
        await server.close()
        try await group.shutdownGracefully()

        // Every bot joined, once: the swarm's handshakes are the server's sessions.
        #expect(
            counts.sessions == 8,
            Comment(
                rawValue:
                    "handshakes failed \(snapshot.counterTotal(SkirmishMetrics.handshakes, where: ["outcome": "failed"])), "
                    + "errors \(snapshot.counterTotal(SkirmishMetrics.errors)), peak bots \(outcome.peakBots), "
                    + "ran \(outcome.elapsed)"))
        #expect(snapshot.counterTotal(SkirmishMetrics.handshakes, where: ["outcome": "ok"]) == 8)
        // Packets and bytes by type, as the server counted them.
        for type in ["hello", "put", "get", "bye"] {
            #expect(sent(type) == counts.received[type, default: 0], "\(type) packets")
            #expect(bytesSent(type) == counts.receivedBytes[type, default: 0], "\(type) bytes")
        }
        #expect(sent("put") > 8 * 20 * 3 / 2 && sent("get") > 8 * 20 * 3 / 2, "both personas played")
        #expect(counts.received["malformed", default: 0] == 0)
        // Each reply the swarm took is one round-trip sample; only replies still in flight at the end are missing
        // from the server's count: one per bot on a quiet machine (20 requests a second), a few per bot when a busy
        // machine delays the bots' last reads; at most 5 % of the replies (a swarm losing replies would miss more).
        let rtt = try #require(snapshot.histogram(SkirmishMetrics.rtt))
        #expect(Int(rtt.count) == received("value"))
        #expect(received("value") <= counts.sent["value", default: 0])
        let replies = counts.sent["value", default: 0]
        #expect(received("value") >= replies - max(8, replies / 20), "\(received("value")) of \(replies) replies taken")
        #expect(received("welcome") == counts.sent["welcome", default: 0])
        // The writers' link adds 10 ms ± 2 ms each way; the readers' has none.
        let writers = try #require(snapshot.histogram(SkirmishMetrics.rtt, where: ["persona": "writers"]))
        let fastestWriter = try #require(writers.quantile(0.01))
        #expect(fastestWriter >= 0.016, "writers' round trips cross the emulated link both ways")
        let readers = try #require(snapshot.histogram(SkirmishMetrics.rtt, where: ["persona": "readers"]))
        #expect(try #require(readers.quantile(0.5)) < (try #require(writers.quantile(0.5))))
        // Errors exist at 0 from the first sample on, for every kind the protocol declares.
        for kind in ["bad_packet", "unknown_reply", "closed_by_server", "silence_timeout", "transport"] {
            let series = early.series(of: SkirmishMetrics.errors, where: ["kind": kind, "persona": "writers"])
            #expect(series.count == 1, "errors{kind=\(kind)} exists at the first sample")
        }
        #expect(snapshot.counterTotal(SkirmishMetrics.errors) == 0)
        // What the protocol cannot measure is absent, not 0: it has no snapshots.
        #expect(snapshot.series(of: SkirmishMetrics.snapshotAge).isEmpty)
        // The script's thresholds, judged on the run.
        let summary = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "keyval.yaml", startedAt: Date(),
            exporter: nil)
        #expect(summary.thresholds.count == 3)
        #expect(summary.passed, "\(summary.thresholds)")
    }

    @Test func aScriptThatNamesAnotherProtocolsBehaviourOrAnUnknownKeyIsRefusedWithItsLine() throws {
        let loader = Catalogue.keyValue().scriptLoader
        let unknown = try #require(throws: ScriptError.self) {
            try loader.parse(
                "name: x\nprotocol: keyval\npersonas:\n  - {name: p, behavior: writer, kays: 5}\n", file: "x.yaml")
        }
        #expect(unknown.line == 4)
        #expect(unknown.message == "unknown key `kays` in a persona")
        #expect(unknown.hint?.contains("did you mean `keys`?") == true)
        let option = try #require(throws: ScriptError.self) {
            try loader.parse(
                "name: x\nprotocol: {name: keyval, silence_timeout: soon}\npersonas: [{name: p, behavior: writer}]\n",
                file: "x.yaml")
        }
        #expect(option.line == 2)
        let protocolName = try #require(throws: ScriptError.self) {
            try loader.parse("name: x\nprotocol: keyvalue\npersonas: [{name: p, behavior: writer}]\n", file: "x.yaml")
        }
        #expect(protocolName.message == "unknown protocol `keyvalue`")
        #expect(protocolName.hint?.contains("keyval") == true)
    }
}

/// The DocC article "Testing your own server" is this target's code: every Swift block in it appears verbatim in the
/// target's sources, so the article cannot show code that does not compile and pass.
@Suite struct ProtocolArticleTests {
    @Test func everyCodeBlockOfTheArticleIsCodeOfThisTarget() throws {
        let article = try ArticleCode(article: "TestingYourOwnServer.md", module: "SkirmishSwarm", testFile: #filePath)
        let sources = try ArticleCode.targetSources(of: #filePath)
        let blocks = article.blocks(in: "swift")
        #expect(blocks.count >= 6, "the article shows the protocol, its behaviours, the catalogue and a run")
        for block in blocks {
            #expect(
                sources.contains(block.text),
                "line \(block.line), not in the target's sources:\n\(block.text.prefix(200))")
        }
    }
}
