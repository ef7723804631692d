import Foundation
import SkirmishENet
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishTestSupport
import SkirmishWire
import Testing

/// "ENet + my messages" as a team would use it: the arena's codec registered as a protocol of its own (`arena`),
/// its `mover` behaviour, and a swarm of movers against the libenet server, which relays their positions and
/// broadcasts 30 Hz state on an unreliable channel and events on a reliable one.
@Suite(.serialized) struct ArenaSwarmTests {
    static let script = """
        name: arena
        protocol: {name: arena, channels: 2, relay: true}
        profile: [{ramp: {to: 4, over: 500ms}}, {hold: {for: 60s}}]
        personas:
          - {name: movers, behavior: mover, input_rate: 20hz, moves: 20}
        """

    @Test func moversSendPositionsUpAndHearTheStateBroadcastDown() async throws {
        let catalogue = Catalogue.arena()
        #expect(catalogue.protocols == ["arena"] && catalogue.behaviors(of: "arena") == ["idle", "mover"])
        let peer = try LibENetPeer(["--seconds", "120"])
        let run = try await LibENetSwarm(Self.script, catalogue: catalogue, port: peer.port)
        // Every mover's 20 positions reach the server (and are relayed to the others), then the broadcast runs.
        let positions = try await settledStats(peer, within: .seconds(30)) { $0["received"]?["unreliable/ch1"] == 80 }
        peer.command("broadcast 2")
        let broadcast = await waitForPeer(peer, within: .seconds(30)) { $0.contains("broadcast done") }
        // Then everything the server sent arrives (loopback, no emulated loss).
        let sent = try peer.stats()["sent"] ?? [:]
        let arrived = await run.waitUntil(within: .seconds(20)) { snapshot in
            ["unreliable/ch1", "reliable/ch0"].allSatisfy {
                snapshot.counterTotal(SkirmishMetrics.packetsReceived, where: ["type": $0]) == UInt64(sent[$0] ?? -1)
            }
        }
        let (summary, _) = try await run.finish()
        #expect(positions["received"]?["unreliable/ch1"] == 80, "\(positions)")
        #expect(broadcast && arrived, "\(summary.packets.receivedByType) of \(sent)")
        #expect(summary.packets.sentByType["unreliable/ch1"] == 80)
        #expect(summary.packets.receivedByType["unreliable/ch1"] == sent["unreliable/ch1"].map(UInt64.init))
        #expect(summary.packets.receivedByType["reliable/ch0"] == sent["reliable/ch0"].map(UInt64.init))
        #expect((sent["reliable/ch0"] ?? 0) >= 4, "a 2 s broadcast sends each mover an event a third of a second")
        for check in ["state_monotonic", "events_in_order", "position_on_table"] {
            #expect(summary.checks?[check]?.failed == 0 && summary.checks?[check]?.judged ?? 0 > 0, "\(check)")
        }
        // Every decoded message was the codec's: nothing undecodable, no error at all.
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.personas.first?.game == "arena")
    }

    /// The article's program: a script file loaded with the arena's catalogue and run to its end.
    @Test func theArticlesProgramRunsAScriptToItsEnd() async throws {
        let peer = try LibENetPeer(["--seconds", "60"])
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("arena-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = """
            name: arena-smoke
            protocol: {name: arena, channels: 2}
            profile: [{ramp: {to: 2, over: 200ms}}, {hold: {for: 2s}}]
            personas: [{name: movers, behavior: mover, input_rate: 20hz, moves: 10}]
            thresholds: {checks_failed: "== 0", errors: "== 0"}
            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        let summary = try await runArena(path, target: Target(transport: .udp, host: "127.0.0.1", port: Int(peer.port)))
        #expect(summary.packets.sentByType["unreliable/ch1"] == 20)
        #expect(summary.handshakes.succeeded == 2 && summary.passed, "\(summary.thresholds)")
    }

    /// The codec's own option is read from the `protocol:` block with the rest, as strictly.
    @Test func theCodecsOptionIsCheckedWithTheProtocolsOwn() throws {
        let loader = Catalogue.arena().scriptLoader
        let echoing = Self.script.replacingOccurrences(of: "relay: true", with: "relay: false")
        let configuration = try loader.parse(echoing, file: "a.yaml").personas.first?.connection
            .get(ENetConnection<ArenaCodec>.Configuration.self)
        #expect(configuration?.codec.relay == false && configuration?.channelCount == 2)
        let error = try #require(throws: ScriptError.self) {
            try loader.parse(Self.script.replacingOccurrences(of: "relay: true", with: "relay: maybe"), file: "a.yaml")
        }
        #expect(error.line == 2 && error.message.contains("relay"))
        let typo = try #require(throws: ScriptError.self) {
            try loader.parse(Self.script.replacingOccurrences(of: "relay: true", with: "relays: true"), file: "a.yaml")
        }
        #expect(typo.line == 2 && typo.hint?.contains("did you mean `relay`?") == true)
    }
}
