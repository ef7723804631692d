import Foundation
import SkirmishSwarm
import SkirmishTestSupport
import Testing

@testable import SkirmishDDNet

/// Swarms of DDNet bots, loaded from scripts and run as `skirmish swarm` runs them, against Debian's unmodified
/// `DDNet-Server` on loopback: the server's own log is the judge of who got in.
///
/// Each run is bounded by its script's profile (at most 20 s); the server's log is read after the run, when every
/// line it will write about the players' arrivals has long been written (a bot counts its handshake only once it has
/// the first snapshot, which the server sends after logging the join).
@Suite(.serialized)
struct SwarmTests {
    /// The bot numbers of a run's names: `run-3` → 3.
    private func numbers(_ names: [String]) -> [Int] {
        names.compactMap { name in name.split(separator: "-").last.flatMap { Int($0) } }.sorted()
    }

    @Test func sixteenBotsPlayTwentySecondsAndTheServerListsEveryOne() async throws {
        let server = try DDNetServer()
        defer { server.stop() }
        let yaml = """
            name: ddnet-sixteen
            protocol: ddnet
            profile: [{ramp: {to: 16, over: 2s}}, {hold: {for: 18s}}]
            personas:
              - {name: runners, weight: 1, behavior: runner, player_name: "run-{n}"}
              - {name: idlers, weight: 1, behavior: idle, player_name: "idle-{n}", clan: idlers, skin: pinky}
            thresholds: {desyncs: "== 0"}
            """
        let run = try await DDNetSwarm.run(yaml, port: server.port)
        let summary = run.summary
        #expect(run.outcome.peakBots == 16)
        #expect(summary.handshakes.succeeded == 16, "\(summary.errors)")
        #expect(summary.handshakes.failed == 0)
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.desyncs == 0)
        #expect(summary.passed)
        // Every bot played on: snapshots all along (single, multi-part or empty: the server's choice, and a server
        // sharing two busy cores with the whole test run sends fewer than one every other tick), an input every tick.
        let snapshots = ["snap_single", "snap", "snap_empty"].reduce(0) {
            $0 + summary.packets.receivedByType[$1, default: 0]
        }
        #expect(snapshots > 16 * 2 * 18, "\(summary.packets.receivedByType)")
        #expect(summary.packets.sentByType["sys_input", default: 0] > 16 * 25 * 18 / 2)
        // A ping a second once in game, for 16 s or more each: at least half of those answered, so a server starved
        // by a busy machine (whose replies wait for its next snapshot) still passes, and a silent one does not.
        #expect((summary.latency.rtt?.count ?? 0) >= 16 * 8, "\(summary.latency.rtt.map { $0.count } ?? 0)")
        #expect((summary.latency.snapshotAge?.count ?? 0) > 0)
        #expect(summary.latency.handshake?.count == 16)

        // The server's own view: every bot entered the game, by the name its persona gave it, exactly once.
        let joined = server.joinedNames
        #expect(joined.count == Int(summary.handshakes.succeeded), "server: \(joined)")
        #expect(Set(joined).count == joined.count, "a bot joined twice: \(joined)")
        #expect(numbers(joined) == Array(0..<16), "server: \(joined)")
        let runners = joined.filter { $0.hasPrefix("run-") }.count
        let idlers = joined.filter { $0.hasPrefix("idle-") }.count
        #expect(runners == summary.personas.first { $0.name == "runners" }?.peakBots)
        #expect(idlers == summary.personas.first { $0.name == "idlers" }?.peakBots)
        #expect(runners + idlers == 16)
    }

    @Test func oneSwarmFillsTwoServers() async throws {
        let first = try DDNetServer()
        defer { first.stop() }
        let second = try DDNetServer()
        defer { second.stop() }
        let yaml = """
            name: ddnet-two-servers
            protocol: ddnet
            profile: [{ramp: {to: 8, over: 2s}}, {hold: {for: 6s}}]
            personas:
              - {name: first, behavior: runner, player_name: "a-{n}", target: "udp://127.0.0.1:\(first.port)"}
              - {name: second, behavior: idle, player_name: "b-{n}", target: "udp://127.0.0.1:\(second.port)"}
            """
        let run = try await DDNetSwarm.run(yaml, port: first.port)
        let summary = run.summary
        #expect(summary.handshakes.succeeded == 8, "\(summary.errors)")
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.desyncs == 0)
        let onFirst = first.joinedNames
        let onSecond = second.joinedNames
        #expect(!onFirst.isEmpty && onFirst.allSatisfy { $0.hasPrefix("a-") }, "first server: \(onFirst)")
        #expect(!onSecond.isEmpty && onSecond.allSatisfy { $0.hasPrefix("b-") }, "second server: \(onSecond)")
        #expect(onFirst.count == summary.personas.first { $0.name == "first" }?.peakBots)
        #expect(onSecond.count == summary.personas.first { $0.name == "second" }?.peakBots)
        #expect(numbers(onFirst + onSecond) == Array(0..<8))
    }

    @Test func aBitFlippedByALyingProxyIsADesyncAtThatSnapshot() async throws {
        let server = try DDNetServer()
        defer { server.stop() }
        // The first bot is sent 150 datagrams (about three seconds of play) before the proxy lies.
        let proxy = try LyingProxy(server: server.port, flipAfter: 150)
        defer { proxy.stop() }
        let yaml = """
            name: ddnet-lying-proxy
            protocol: ddnet
            profile: [{ramp: {to: 3, over: 1s}}, {hold: {for: 9s}}]
            personas: [{name: runners, behavior: runner}]
            """
        let run = try await DDNetSwarm.run(yaml, port: proxy.port)
        let flipped = try #require(proxy.flipped, "the proxy never found a snapshot to corrupt")
        let summary = run.summary
        #expect(summary.handshakes.succeeded == 3, "\(summary.errors)")
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        // One flip, one episode, caught at the very snapshot that carried it, with both checksums.
        #expect(summary.desyncs == 1)
        let episode = try #require(run.outcome.desyncEpisodes.first)
        #expect(run.outcome.desyncEpisodes.count == 1)
        #expect(episode.tick == UInt32(bitPattern: flipped.tick), "episode \(episode), flipped \(flipped)")
        #expect(!episode.expected.isEmpty && episode.expected != episode.observed)
        // The bot asked for a full snapshot and went on in sync.
        #expect(summary.packets.sentByType["sys_input", default: 0] > 3 * 25 * 8)
    }

    @Test func botsReachTheGameThroughFivePercentLossAndResend() async throws {
        // Chat lines are vital, so lost ones are resent; without the spam mute, the server relays every line.
        let server = try DDNetServer(settings: ["sv_spam_mute_duration 0"])
        defer { server.stop() }
        let yaml = """
            name: ddnet-lossy
            protocol: ddnet
            profile: [{ramp: {to: 8, over: 2s}}, {hold: {for: 13s}}]
            personas:
              - {name: lossy, behavior: chatter, chat_every: 1500ms..2500ms, link: {loss: 5%}}
            """
        let run = try await DDNetSwarm.run(yaml, port: server.port)
        let summary = run.summary
        #expect(summary.handshakes.succeeded >= 8, "\(summary.errors)")
        #expect(numbers(server.joinedNames).count == Int(summary.handshakes.succeeded))
        #expect(Set(numbers(server.joinedNames)) == Set(0..<8))
        #expect((summary.packets.resends ?? 0) > 0)
        #expect(summary.desyncs == 0)
        let echoes = try #require(summary.checks?["chat_echoed"])
        #expect(echoes.judged > 8 * 3)
    }

    @Test func chattersHearTheirOwnLinesBack() async throws {
        let server = try DDNetServer(settings: ["sv_spam_mute_duration 0"])
        defer { server.stop() }
        let yaml = """
            name: ddnet-chatter
            protocol: ddnet
            profile: [{ramp: {to: 4, over: 1s}}, {hold: {for: 9s}}]
            personas: [{name: chatters, behavior: chatter, chat_every: 1500ms..2s, echo_timeout: 3s}]
            """
        let run = try await DDNetSwarm.run(yaml, port: server.port)
        let echoes = try #require(run.summary.checks?["chat_echoed"])
        #expect(echoes.judged >= 4 * 3)
        #expect(echoes.failed == 0)
        #expect(run.summary.packets.sentByType["game_say", default: 0] >= echoes.judged)
    }

    @Test func aFullServerRefusesTheRestWithCountedErrors() async throws {
        let server = try DDNetServer(settings: ["sv_max_clients 4"])
        defer { server.stop() }
        let yaml = """
            name: ddnet-full
            protocol: ddnet
            profile: [{ramp: {to: 8, over: 1s}}, {hold: {for: 7s}}]
            personas: [{name: crowd, behavior: idle}]
            """
        let run = try await DDNetSwarm.run(yaml, port: server.port)
        let summary = run.summary
        #expect(run.outcome.peakBots == 8)
        #expect(summary.handshakes.succeeded == 4)
        #expect(summary.errors["rejected_server_full", default: 0] >= 4, "\(summary.errors)")
        #expect(summary.errors.keys.allSatisfy { $0 == "rejected_server_full" }, "\(summary.errors)")
        #expect(summary.handshakes.failed == summary.errors["rejected_server_full"])
        #expect(summary.desyncs == 0)
        #expect(server.joinedNames.count == 4)
    }
}
