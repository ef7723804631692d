import Foundation
import SkirmishNet
import SkirmishScript
import SkirmishSwarm
import SkirmishTelemetry
import SkirmishTestSupport
import SkirmishWire
import Synchronization
import Testing

@testable import SkirmishENet

/// Swarms of ENet bots, loaded from scripts with the `enet` protocol and its `payload` behaviour, against the real
/// libenet server of `Peer/enet_peer.c`: every figure the swarm reports is compared with what libenet counted itself.
///
/// Plans are generous (a busy 2-core machine) and each test ends its run as soon as the figure it waits for is
/// complete; every wait has a deadline.
@Suite(.serialized) struct SwarmTests {
    static func checks(_ name: String, _ snapshot: MetricsSnapshot) -> UInt64 {
        snapshot.counterTotal(SkirmishMetrics.checks, where: ["check": name])
    }

    /// Whether the run's check `name` judged `count` replies and none failed.
    static func passed(_ summary: RunSummary, _ name: String, _ count: UInt64) -> Bool {
        summary.checks?[name]?.judged == count && summary.checks?[name]?.failed == 0
    }

    /// Reliable, unreliable and unsequenced payloads on three channels, echoed by libenet: the swarm's packets by
    /// channel and delivery are the server's own counts both ways, its bytes by type add up to the bytes it sent and
    /// received, and every reply was matched, in order where reliable, and timed.
    @Test func packetCountsByChannelAndDeliveryAreTheServers() async throws {
        let peer = try LibENetPeer(["--seconds", "120"])
        let yaml = """
            name: enet-counts
            protocol: {name: enet, channels: 3}
            profile: [{ramp: {to: 6, over: 1s}}, {hold: {for: 60s}}]
            personas:
              - name: reliable
                behavior: payload
                payload: {channel: 0, rate: 20hz, count: 40, template: [{text: "Q"}, {sequence: u32}, {random: 11}]}
                steps: [{play: until_match_over}, {quit: true}]
              - name: unreliable
                behavior: payload
                payload: {channel: 1, delivery: unreliable, rate: 20hz, count: 40, template: [{sequence: u16le}, {time: f64}]}
                steps: [{play: until_match_over}, {quit: true}]
              - name: unsequenced
                behavior: payload
                payload: {channel: 2, delivery: unsequenced, rate: 20hz, count: 40, template: [{bytes: "0a0b"}, {sequence: u8}]}
                steps: [{play: until_match_over}, {quit: true}]
            """
        let run = try await LibENetSwarm(yaml, port: peer.port)
        let echoed = await run.waitUntil(within: .seconds(60)) { Self.checks("echo_matched", $0) == 6 * 40 }
        let (summary, outcome) = try await run.finish()
        #expect(echoed, "\(summary.checks ?? [:])")
        let kinds = ["reliable/ch0", "unreliable/ch1", "unsequenced/ch2"]
        let stats = try await settledStats(peer, within: .seconds(10)) { stats in
            kinds.allSatisfy { UInt64(stats["received"]?[$0] ?? 0) == summary.packets.sentByType[$0] }
        }
        #expect(summary.personas.map(\.peakBots) == [2, 2, 2])
        for kind in kinds {
            #expect(summary.packets.sentByType[kind] == 80, "\(kind) sent")
            #expect(summary.packets.sentByType[kind] == stats["received"]?[kind].map(UInt64.init), "\(kind) sent")
            #expect(summary.packets.receivedByType[kind] == stats["sent"]?[kind].map(UInt64.init), "\(kind) received")
            // Each packet's bytes: its payload, its command's header, and its share of datagram headers.
            let payload = UInt64(try #require(stats["receivedBytes"]?[kind]))
            #expect(try #require(summary.packets.bytesSentByType?[kind]) > payload + 80 * 4, "\(kind) bytes")
        }
        // The bytes by type count each datagram's header once and each command once: when nothing went twice they
        // are every byte; a resend or a duplicate (an acknowledgement slower than ENet's few-millisecond resend
        // timeout on loopback, on a busy machine) is the only difference.
        let bytesSent = try #require(summary.packets.bytesSentByType?.values.reduce(0, +))
        let bytesReceived = try #require(summary.packets.bytesReceivedByType?.values.reduce(0, +))
        if summary.packets.resends == 0 {
            #expect(bytesSent == summary.packets.bytesSent)
        } else {
            #expect(bytesSent < summary.packets.bytesSent)
        }
        if summary.protocolEvents?["duplicates"] == nil {
            #expect(bytesReceived == summary.packets.bytesReceived)
        } else {
            #expect(bytesReceived < summary.packets.bytesReceived)
        }
        #expect(summary.packets.sentByType["connect"] == 6 && summary.packets.receivedByType["verify_connect"] == 6)
        // The 'Q' stream arrived at the server exactly once and in order, and every reply was matched.
        #expect(stats["totals"]?["inOrder"] == 80 && stats["totals"]?["outOfOrder"] == 0)
        #expect(Self.passed(summary, "echo_matched", 240))
        #expect(Self.passed(summary, "echo_in_order", 80))
        // Figures: ENet's own round trip and handshake time, each request's round trip, no error.
        #expect(summary.handshakes.succeeded == 6 && summary.handshakes.failed == 0)
        #expect(summary.latency.handshake?.count == 6)
        #expect((summary.latency.rtt?.count ?? 0) > 0 && (summary.latency.rtt?.p50 ?? 0) >= 0.001)
        let request = try #require(summary.latency.requestRTT)
        #expect(request.count == 240 && (request.p50 ?? 0) > 0)
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.protocolEvents?["fragments_sent"] == nil)
        // The table shows the channels and the request round trip.
        let table = summary.table()
        #expect(table.contains("reliable/ch0 80 sent") && table.contains("request rtt p50"))
        #expect(outcome.snapshot.series(of: SkirmishMetrics.snapshotAge).isEmpty, "ENet has no snapshots")
    }

    /// Under 10 % emulated loss each way, every reliable payload reaches libenet exactly once and in order (the
    /// server checks each bot's sequence numbers), and every echo comes back in order; the losses cost resends.
    @Test func reliablePayloadsSurviveTenPercentLossOnceAndInOrder() async throws {
        let peer = try LibENetPeer(["--seconds", "150"])
        let yaml = """
            name: enet-loss
            protocol: {name: enet}
            profile: [{ramp: {to: 2, over: 500ms}}, {hold: {for: 120s}}]
            personas:
              - name: lossy
                behavior: payload
                link: {loss: 10%}
                payload: {rate: 30hz, count: 150, linger: 60s, template: [{text: "Q"}, {sequence: u32}, {zeros: 27}]}
                steps: [{play: until_match_over}, {quit: true}]
            """
        let run = try await LibENetSwarm(yaml, port: peer.port, seed: 11)
        let echoed = await run.waitUntil(within: .seconds(120)) { Self.checks("echo_in_order", $0) == 300 }
        let (summary, _) = try await run.finish()
        #expect(echoed, "\(summary.checks ?? [:])")
        let stats = try await settledStats(peer, within: .seconds(10)) { $0["received"]?["reliable/ch0"] == 300 }
        #expect(stats["received"]?["reliable/ch0"] == 300)
        #expect(stats["totals"]?["inOrder"] == 300 && stats["totals"]?["outOfOrder"] == 0)
        #expect(summary.packets.sentByType["reliable/ch0"] == 300)
        #expect(summary.packets.receivedByType["reliable/ch0"] == 300)
        #expect(Self.passed(summary, "echo_matched", 300))
        #expect(Self.passed(summary, "echo_in_order", 300))
        #expect((summary.packets.resends ?? 0) > 0)
        #expect(summary.handshakes.succeeded == 2)
        #expect(summary.latency.requestRTT?.count == 300)
    }

    /// 4 KiB payloads fragment and reassemble both ways: reliably, and as unreliable fragments when the script asks
    /// (libenet echoes them with ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT). The unreliable one carries its sequence
    /// number in its last fragment, so a reply is matched only when the message was put back together in order.
    @Test func fourKiBPayloadsFragmentAndReassembleBothWays() async throws {
        let peer = try LibENetPeer(["--seconds", "120"])
        let yaml = """
            name: enet-fragments
            protocol: {name: enet, channels: 2, unreliable_fragments: true}
            profile: [{ramp: {to: 2, over: 500ms}}, {hold: {for: 60s}}]
            personas:
              - name: reliable
                behavior: payload
                payload: {channel: 0, rate: 10hz, count: 10, template: [{text: "Q"}, {sequence: u32}, {random: 4091}]}
                steps: [{play: until_match_over}, {quit: true}]
              - name: unreliable
                behavior: payload
                payload: {channel: 1, delivery: unreliable, rate: 10hz, count: 10, template: [{random: 4092}, {sequence: u32}]}
                steps: [{play: until_match_over}, {quit: true}]
            """
        let run = try await LibENetSwarm(yaml, port: peer.port)
        let echoed = await run.waitUntil(within: .seconds(60)) { Self.checks("echo_matched", $0) == 20 }
        let (summary, _) = try await run.finish()
        #expect(echoed, "\(summary.checks ?? [:])")
        let stats = try await settledStats(peer, within: .seconds(10)) {
            $0["receivedBytes"]?["reliable/ch0"] == 40_960 && $0["receivedBytes"]?["unreliable/ch1"] == 40_960
        }
        #expect(stats["receivedBytes"]?["reliable/ch0"] == 40_960)
        #expect(stats["receivedBytes"]?["unreliable/ch1"] == 40_960)
        #expect(stats["totals"]?["inOrder"] == 10)
        #expect(summary.packets.receivedByType["reliable/ch0"] == 10)
        #expect(summary.packets.receivedByType["unreliable/ch1"] == 10)
        #expect(Self.passed(summary, "echo_matched", 20))
        // At an MTU of 1400 a fragment holds 1,372 bytes: three per message, each way.
        #expect(summary.protocolEvents?["fragments_sent"] == 60 && summary.protocolEvents?["fragments_received"] == 60)
        #expect(summary.table().contains("fragments_sent 60"))
    }

    /// A server-side disconnect with data reaches the agent as the close reason's code, and is counted by kind.
    @Test func serverDisconnectWithDataReachesTheAgent() async throws {
        let peer = try LibENetPeer(["--seconds", "120"])
        let reasons = Reasons()
        var catalogue = Catalogue().registeringENet()
        catalogue.register(behavior: "recorder") { _ in DisconnectRecorder(reasons: reasons) }
        let yaml = """
            name: enet-kick
            protocol: enet
            profile: [{ramp: {to: 3, over: 500ms}}, {hold: {for: 60s}}]
            personas: [{name: kicked, behavior: recorder}]
            """
        let run = try await LibENetSwarm(yaml, catalogue: catalogue, port: peer.port)
        let connected = await waitForPeer(peer, within: .seconds(30)) {
            $0.filter { $0.hasPrefix("connect ") }.count == 3
        }
        peer.command("kick 4242")
        let deadline = ContinuousClock.now + .seconds(30)
        while reasons.all.count < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let (summary, _) = try await run.finish()
        #expect(connected, "\(peer.lines)")
        let heard = reasons.all
        #expect(heard.count >= 3)
        #expect(heard.allSatisfy { $0.kind == "closed_by_server" && $0.code == 4242 && !$0.isOutage }, "\(heard)")
        #expect(summary.errors["closed_by_server"] ?? 0 >= 3)
    }

    /// A libenet server with checksums and bots without, and the reverse: no handshake succeeds, each failure is
    /// counted by kind, and the run's log says the two ends disagree on checksums.
    @Test(arguments: [(true, false), (false, true)])
    func checksumMismatchFailsToConnectWithAClearError(server: Bool, client: Bool) async throws {
        let peer = try LibENetPeer(["--seconds", "120"] + (server ? ["--checksum"] : []))
        let yaml = """
            name: enet-checksum
            protocol: {name: enet, checksum: \(client), handshake_timeout: 2s}
            profile: [{ramp: {to: 2, over: 200ms}}, {hold: {for: 60s}}]
            personas: [{name: mismatched, behavior: idle}]
            """
        let run = try await LibENetSwarm(yaml, port: peer.port)
        let failed = await run.waitUntil(within: .seconds(40)) {
            $0.counterTotal(SkirmishMetrics.handshakes, where: ["outcome": "failed"]) >= 2
        }
        let (summary, _) = try await run.finish()
        #expect(failed)
        #expect(summary.handshakes.succeeded == 0 && summary.handshakes.failed >= 2)
        let byKind = (summary.errors["handshake_timeout"] ?? 0) + (summary.errors["checksum_mismatch"] ?? 0)
        #expect(byKind == summary.handshakes.failed, "\(summary.errors)")
        let causes = run.log.all.filter { $0.contains("handshake failed") }
        #expect(!causes.isEmpty && causes.allSatisfy { $0.contains("checksum") }, "\(run.log.all)")
        peer.drain()
        #expect(!peer.lines.contains { $0.hasPrefix("connect ") })
    }

    /// A bot whose upstream bandwidth is limited below what it sends: ENet's bandwidth throttle (once a second) cuts
    /// the packet throttle, which drops unreliable packets before they leave; the throttle changes and the drops
    /// reach the summary, and what did leave is exactly what libenet received. Every series the plug-in declares
    /// exists in the metrics, at 0 where nothing happened.
    @Test func throttleChangesAndEveryFigureReachTheSummaryAndTheMetrics() async throws {
        let peer = try LibENetPeer(["--seconds", "120"])
        let yaml = """
            name: enet-throttle
            protocol: {name: enet, channels: 2, outgoing_bandwidth: 2000}
            profile: [{ramp: {to: 1, over: 100ms}}, {hold: {for: 60s}}]
            personas:
              - name: greedy
                behavior: payload
                payload: {channel: 1, delivery: unreliable, rate: 60hz, template: [{sequence: u32}, {random: 96}]}
            """
        let run = try await LibENetSwarm(yaml, port: peer.port)
        let throttled = await run.waitUntil(within: .seconds(40)) { snapshot in
            snapshot.counterTotal(SkirmishMetrics.protocolEvents, where: ["event": "unreliable_throttled"]) >= 10
        }
        let (summary, outcome) = try await run.finish()
        #expect(throttled, "\(summary.protocolEvents ?? [:])")
        let events = summary.protocolEvents ?? [:]
        #expect(events["throttle_changes"] ?? 0 >= 1 && events["throttle_configured"] ?? 0 >= 1, "\(events)")
        let sent = try #require(summary.packets.sentByType["unreliable/ch1"])
        let stats = try await settledStats(peer, within: .seconds(10)) {
            $0["received"]?["unreliable/ch1"].map(UInt64.init) == sent
        }
        // Unreliable and sent until the end: libenet drops what it has received but not yet handed to the
        // application when the disconnect is in the same batch (`enet_protocol_handle_disconnect` resets the peer's
        // queues), which a peer starved of CPU sees for the last packet or two. None may be invented or doubled.
        let received = try #require(stats["received"]?["unreliable/ch1"].map(UInt64.init))
        #expect(received <= sent && sent - received <= 2, "received \(received) of \(sent)")
        // The bandwidth limit this side sent after connecting, as a libenet client does.
        #expect(summary.packets.sentByType["bandwidth_limit"] ?? 0 >= 1)
        // Every series exists, at 0 where nothing happened: ENet's events, error kinds (the disconnects by reason
        // among them) and packet kinds, and the figures it measures.
        let description = ENetConnection<ENetRawCodec>.description
        let snapshot = outcome.snapshot
        for event in description.events {
            #expect(snapshot.series(of: SkirmishMetrics.protocolEvents, where: ["event": event]).count == 1, "\(event)")
        }
        for kind in description.errorKinds + CloseReason.runtimeKinds {
            #expect(snapshot.series(of: SkirmishMetrics.errors, where: ["kind": kind]).count == 1, "\(kind)")
        }
        for kind in ["reliable/ch0", "unsequenced/ch8+", "acknowledge", "ping", "disconnect"] {
            #expect(snapshot.series(of: SkirmishMetrics.packetsSent, where: ["type": kind]).count == 1, "\(kind)")
        }
        for family in [
            SkirmishMetrics.rtt, SkirmishMetrics.handshake, SkirmishMetrics.requestRTT, SkirmishMetrics.reliableResends,
            SkirmishMetrics.packetsLost,
        ] {
            #expect(snapshot.series(of: family).count == 1, "\(family.name)")
        }
        #expect((summary.latency.rtt?.count ?? 0) > 0 && summary.latency.handshake?.count == 1)
        // ENet has no snapshots: no series, and the summary says "not measured" rather than 0.
        #expect(snapshot.series(of: SkirmishMetrics.snapshotAge).isEmpty && summary.latency.snapshotAge == nil)
    }

    /// The shipped script loads with the ENet catalogue and runs against libenet as its comments say.
    @Test func theShippedEchoScriptRunsAgainstLibENet() async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("bots/enet-echo.yaml").path
        let catalogue = Catalogue.builtIn.registeringENet()
        let script = try catalogue.scriptLoader.load(path: path)
        #expect(script.protocolName == "enet")
        let peer = try LibENetPeer(["--seconds", "120"])
        var yaml = try String(contentsOfFile: path, encoding: .utf8)
        // The same script, smaller: a few bots for a moment.
        yaml = yaml.replacingOccurrences(of: "{ramp: {to: 50, over: 5s}}", with: "{ramp: {to: 4, over: 500ms}}")
        let run = try await LibENetSwarm(yaml, catalogue: catalogue, port: peer.port)
        let replied = await run.waitUntil(within: .seconds(30)) { Self.checks("echo_matched", $0) >= 40 }
        let (summary, _) = try await run.finish()
        #expect(replied)
        #expect(summary.checks?.values.allSatisfy { $0.failed == 0 } == true, "\(summary.checks ?? [:])")
        #expect(summary.errors.isEmpty, "\(summary.errors)")
    }
}

/// What a ``DisconnectRecorder`` heard, shared with the test.
final class Reasons: Sendable {
    private let reasons = Mutex<[CloseReason]>([])

    func append(_ reason: CloseReason) { reasons.withLock { $0.append(reason) } }

    var all: [CloseReason] { reasons.withLock { $0 } }
}

/// A behaviour of the test's own: it holds the connection and records why it ended.
struct DisconnectRecorder: Agent {
    typealias Connection = ENetConnection<ENetRawCodec>

    let reasons: Reasons

    var nextWake: Instant? { nil }
    var isMatchOver: Bool { false }

    func established(_ session: ENetSession, context: inout AgentContext<Connection>) {}
    func received(_ message: ENetPacket, context: inout AgentContext<Connection>) {}
    func wake(context: inout AgentContext<Connection>) {}
    func disconnected(_ reason: CloseReason, context: inout AgentContext<Connection>) { reasons.append(reason) }
}
