import Foundation
import NIOCore
import NIOPosix
import SkirmishGames
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Synchronization
import Testing

@testable import SkirmishScript
@testable import SkirmishServer
@testable import SkirmishSwarm

/// A server whose state drifted but which hashes its drifted state honestly: the real server behind a proxy that
/// changes one field of what it forwards (by one ulp, one goal, one card) and recomputes the snapshot's hash, so
/// the transport integrity check passes and only the replica's prediction can tell.
///
/// Every change must be detected, as one episode naming the right part at the tick that was changed, written once to
/// the log and to `summary.json`.
@Suite(.serialized) struct DesyncDetectionTests {
    /// One change the proxy made: to which tick (Puck) and which part it should be reported as.
    struct Change: Hashable, CustomStringConvertible {
        var tick: UInt32?
        var part: String
        var description: String { "\(part)@\(tick.map { "\($0)" } ?? "-")" }
    }

    /// The changes made so far, by every connection.
    final class Changes: Sendable {
        private let list = Mutex<[Change]>([])
        func add(_ change: Change) { list.withLock { $0.append(change) } }
        var all: [Change] { list.withLock { $0 } }
    }

    enum PuckChange: String, CaseIterable, CustomStringConvertible {
        /// The puck's x velocity one ulp up (`Float.nextUp`): no grid to fall off, only the prediction can tell.
        case puckVelocity
        /// The receiver's own paddle's x one ulp up.
        case paddle
        /// The receiver's score one goal up, where no goal was reachable.
        case score
        var description: String { rawValue }
        var part: String {
            switch self {
            case .puckVelocity: "puck"
            case .paddle: "paddles"
            case .score: "score"
            }
        }
    }

    /// A connection's rewriter for Puck: changes at most 4 snapshots, each at least 6 snapshots after the last, all
    /// in the first 15 s of play, and only where the change is determinable: two ticks after a playing snapshot it
    /// forwarded unchanged, and for the puck where a replica that knows nobody's inputs compares it (the bot, which
    /// knows its own, compares at least there), for the score where no goal was reachable.
    static func puckTamper(_ change: PuckChange, into changes: Changes) -> (Message) -> [Message] {
        var seat = 0
        var probe = PuckReplica(seat: 0)
        var previous: TableSnapshot?
        var since = 0
        var made = 0
        return { message in
            if case .welcome(let welcome) = message {
                seat = Int(welcome.seat)
                probe = PuckReplica(seat: seat)
            }
            guard case .tableSnapshot(var snapshot) = message else { return [message] }
            let before = previous
            previous = snapshot
            let comparedBefore = probe.compared.puck
            _ = probe.apply(snapshot)
            since += 1
            guard let before, made < 4, since >= 6, snapshot.tick <= 900, before.phase == .playing,
                snapshot.phase == .playing, snapshot.tick == before.tick &+ 2
            else { return [message] }
            switch change {
            case .puckVelocity:
                guard probe.compared.puck > comparedBefore else { return [message] }
                snapshot.puck.vx = snapshot.puck.vx.nextUp
            case .paddle:
                snapshot.me.x = snapshot.me.x.nextUp
            case .score:
                guard before.puck.y > 100, before.puck.y < 380 else { return [message] }
                snapshot.myScore &+= 1
            }
            snapshot.stateHash = PuckMatch(snapshot: snapshot, seat: seat).stateHash
            since = 0
            made += 1
            changes.add(Change(tick: snapshot.tick, part: change.part))
            return [.tableSnapshot(snapshot)]
        }
    }

    /// A connection's rewriter for Snap: every 5th card turned it forwards shows the next card of the deck instead
    /// (at most 3 per connection, the state hash as the server sent it).
    static func snapTamper(into changes: Changes) -> (Message) -> [Message] {
        var turned = 0
        var made = 0
        return { message in
            guard case .cardTurned(var card) = message else { return [message] }
            turned += 1
            guard turned % 5 == 0, made < 3, let other = Card(rawValue: (card.card.rawValue + 1) % 52) else {
                return [message]
            }
            card.card = other
            made += 1
            changes.add(Change(tick: nil, part: "piles"))
            return [.cardTurned(card)]
        }
    }

    /// A connection's rewriter for Suns: every 2nd `SunsCapture` relayed to it carries a time one ulp later (at most
    /// 3 per connection), re-sealed, so only the receiver's check against the striker's `SunsStrike` can tell.
    static func sunsTamper(into changes: Changes) -> (Message) -> [Message] {
        var relayed = 0
        var made = 0
        return { message in
            guard case .sunsCapture(var capture) = message else { return [message] }
            relayed += 1
            guard relayed % 2 == 0, made < 3 else { return [message] }
            capture.gameTime = capture.gameTime.nextUp
            made += 1
            changes.add(Change(tick: nil, part: "captures"))
            return [.sunsCapture(capture)]
        }
    }

    struct Run {
        var outcome: SwarmOutcome
        var summary: RunSummary
        var warnings: [LogCapture.Entry]
        var changes: [Change]
    }

    /// Runs `bots` bots of `personas` for `seconds` through a proxy that rewrites each connection with `tamper`, over
    /// UDP (the proxy re-seals what it changes under the session key) or TCP.
    static func run(
        seconds: Int, bots: Int, personas: String, transport: Transport = .udp,
        tamper: @escaping @Sendable (Changes) -> (Message) -> [Message]
    ) async throws -> Run {
        let capture = LogCapture()
        let changes = Changes()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var serverConfiguration = ServerConfiguration()
        serverConfiguration.http = nil
        if transport == .udp {
            serverConfiguration.udp = .init(host: "127.0.0.1", port: 0)
            serverConfiguration.tcp = nil
        } else {
            serverConfiguration.udp = nil
        }
        let server = try await ReferenceServer.start(configuration: serverConfiguration, group: group)
        let port: Int
        let close: () async -> Void
        if transport == .udp {
            let proxy = try await UDPTamperingProxy.start(
                to: try #require(server.addresses.udp), group: group, perClient: { tamper(changes) })
            port = proxy.port
            close = { await proxy.close() }
        } else {
            let proxy = try await TamperingProxy.start(
                to: try #require(server.addresses.tcp), group: group, perConnection: { tamper(changes) })
            port = proxy.port
            close = { await proxy.close() }
        }
        let script = try Catalogue.builtIn.scriptLoader.parse(
            """
            name: desyncs
            profile: [{ramp: {to: \(bots), over: 1s}}, {hold: {for: 5m}}]
            personas: \(personas)
            """, file: "desyncs.yaml")
        let plan = try LoadPlan(script: script, overrides: .init(duration: .seconds(seconds)))
        let configuration = SwarmConfiguration(
            script: script, plan: plan, target: Target(transport: transport, host: "127.0.0.1", port: port), seed: 9,
            runID: "desyncs", loops: 1)
        let swarm = try await Swarm(
            configuration: configuration, group: group, logger: capture.logger("skirmish.swarm"))
        let outcome = await swarm.run()
        await close()
        await server.shutdown()
        try await group.shutdownGracefully()
        // Through the file, as `skirmish report` and a CI job read it.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("desyncs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let written = RunSummary(
            outcome: outcome, configuration: configuration, scriptPath: "desyncs.yaml", startedAt: Date(),
            exporter: nil)
        let path = try RunOutput.writeSummary(written, to: directory.path)
        let summary = try RunSummary.load(path: path)
        return Run(
            outcome: outcome, summary: summary, warnings: capture.entries(startingWith: "desync"),
            changes: changes.all)
    }

    @Test(.timeLimit(.minutes(3)), arguments: PuckChange.allCases)
    func aPuckServerThatDriftedIsCaughtEveryTime(change: PuckChange) async throws {
        let run = try await Self.run(
            // Defenders keep to their goals, so a puck in flight between them is often out of every paddle's reach.
            seconds: 20, bots: 4, personas: "[{name: defender, game: puck, behavior: defender}]"
        ) { changes in Self.puckTamper(change, into: changes) }
        let changes = run.changes
        #expect(changes.count >= 2, "the proxy found too few places to change")
        // Every change detected, once, as the right part, at the tick that was changed.
        let episodes = try #require(run.summary.desyncEpisodes)
        #expect(run.summary.desyncs == UInt64(changes.count), "\(episodes)")
        #expect(episodes.count == changes.count)
        #expect(
            episodes.map { Change(tick: $0.tick, part: $0.part) }.sorted { $0.description < $1.description }
                == changes.sorted { $0.description < $1.description }, "\(episodes)")
        #expect(run.summary.games["puck"]?.desyncsByPart[change.part] == UInt64(changes.count))
        for episode in episodes {
            // Detected with the snapshot that carried it: the first divergent tick is that snapshot's, at most one
            // snapshot interval after the last tick that agreed, and the delay is that snapshot's age.
            let tick = try #require(episode.tick)
            if let since = episode.since {
                #expect(tick &- since < UInt32(PuckConstants.snapshotEvery), "\(episode)")
            }
            #expect(episode.detectionSeconds != nil, "\(episode)")
            #expect(episode.expected != episode.observed && !episode.observed.isEmpty, "\(episode)")
            #expect(episode.game == "puck" && episode.persona == "defender" && episode.match != 0)
        }
        // The end-of-run table names the first episode.
        #expect(run.summary.table().contains("first desync: bot "), "\(run.summary.table())")
        let worst = episodes.compactMap(\.detectionSeconds).max() ?? 0
        print(
            "DesyncDetectionTests: \(change.part): \(episodes.count) of \(changes.count) changes detected, "
                + "slowest detection \(Int(worst * 1_000)) ms (bot RTT up to "
                + "\(Int((episodes.map(\.rttSeconds).max() ?? 0) * 1_000)) ms)")
        let delays = run.outcome.snapshot.histogram(SkirmishMetrics.desyncDetection)
        #expect(delays?.count == UInt64(changes.count))
        // One warning per episode, carrying the same record.
        #expect(run.warnings.count == changes.count, "\(run.warnings)")
        for warning in run.warnings {
            #expect(warning.level == .warning)
            #expect(warning.metadata["part"] == change.part)
            #expect(warning.metadata["expected"] != nil && warning.metadata["observed"] != nil)
            #expect(warning.metadata["detection.seconds"] != nil)
            #expect(
                episodes.contains {
                    "\($0.bot)" == warning.metadata["bot.id"] && "\($0.tick!)" == warning.metadata["tick"]
                })
        }
    }

    @Test(.timeLimit(.minutes(3)), arguments: [Transport.udp, .tcp])
    func aSnapServerThatTurnsTheWrongCardIsCaughtEveryTime(transport: Transport) async throws {
        let run = try await Self.run(
            seconds: 10, bots: 3,
            personas: "[{name: snap, game: snap, seats: 3, snap_reaction: {mean: 200ms, stddev: 50ms}}]",
            transport: transport
        ) { changes in Self.snapTamper(into: changes) }
        let changes = run.changes
        #expect(changes.count >= 3)
        let episodes = try #require(run.summary.desyncEpisodes)
        #expect(run.summary.desyncs == UInt64(changes.count), "\(episodes)")
        #expect(episodes.count == changes.count)
        #expect(episodes.allSatisfy { $0.part == "piles" }, "\(episodes)")
        #expect(episodes.allSatisfy { $0.expected.hasPrefix("seat ") && $0.expected != $0.observed }, "\(episodes)")
        #expect(run.warnings.count == changes.count)
        #expect(run.warnings.allSatisfy { $0.metadata["part"] == "piles" })
    }

    @Test(.timeLimit(.minutes(3)))
    func aSunsRelayThatChangesACaptureTimeByOneULPIsCaughtEveryTime() async throws {
        let run = try await Self.run(seconds: 15, bots: 8, personas: "[{name: suns, game: suns}]") { changes in
            Self.sunsTamper(into: changes)
        }
        let changes = run.changes
        #expect(changes.count >= 16, "the proxy changed only \(changes.count) captures")
        let episodes = try #require(run.summary.desyncEpisodes)
        #expect(run.summary.desyncs == UInt64(changes.count), "\(episodes)")
        #expect(episodes.count == changes.count)
        #expect(run.summary.games["suns"]?.desyncsByPart["captures"] == UInt64(changes.count))
        for episode in episodes {
            #expect(episode.game == "suns" && episode.persona == "suns" && episode.part == "captures", "\(episode)")
            #expect(episode.tick == nil && episode.match != 0, "\(episode)")
            // The same sun, and the observed time the next float after the expected one.
            let expected = try #require(Self.time(episode.expected), "\(episode)")
            let observed = try #require(Self.time(episode.observed), "\(episode)")
            #expect(observed == expected.nextUp, "\(episode)")
            #expect(episode.expected.prefix(while: { $0 != " " }) == episode.observed.prefix(while: { $0 != " " }))
            // Detected at the capture's receipt, which follows its strike's (they travel together): the delay is the
            // time between the two on the bot's loop, a few ms here; the bound only leaves room for a busy machine.
            let delay = try #require(episode.detectionSeconds)
            #expect(delay >= 0 && delay <= max(episode.rttSeconds, 2), "\(episode)")
        }
        print(
            "DesyncDetectionTests: captures: \(episodes.count) of \(changes.count) changed SunsCapture times detected, "
                + "slowest \(Int((episodes.compactMap(\.detectionSeconds).max() ?? 0) * 1_000)) ms after its strike")
        #expect(run.outcome.snapshot.histogram(SkirmishMetrics.desyncDetection)?.count == UInt64(changes.count))
        #expect(run.warnings.count == changes.count, "\(run.warnings)")
        for warning in run.warnings {
            #expect(warning.level == .warning && warning.metadata["part"] == "captures")
            #expect(warning.metadata["tick"] == "none" && warning.metadata["detection.seconds"] != nil)
            #expect(
                episodes.contains {
                    "\($0.bot)" == warning.metadata["bot.id"] && $0.observed == warning.metadata["observed"]
                })
        }
    }

    @Test(.timeLimit(.minutes(3)))
    func anHonestSunsRunThroughTheProxyHasNoDesync() async throws {
        let run = try await Self.run(seconds: 10, bots: 8, personas: "[{name: suns, game: suns}]") { _ in { [$0] } }
        #expect(run.summary.desyncs == 0, "\(run.summary.desyncEpisodes ?? [])")
        #expect((run.summary.games["suns"]?.desyncsByPart["captures"] ?? 0) == 0)
        // The series a dashboard reads exists at 0 on a clean run.
        let series = run.outcome.snapshot.series(
            of: SkirmishMetrics.desyncs, where: ["game": "suns", "part": "captures"])
        #expect(series.count == 1 && run.outcome.snapshot.counterTotal(SkirmishMetrics.desyncs) == 0)
        #expect((run.summary.games["suns"]?.matchesCompleted ?? 0) >= 4)
        #expect(run.warnings.isEmpty, "\(run.warnings)")
    }

    /// The time in an episode's `sun=3 time=0x3f900000 (1.125)`, from its bit pattern.
    static func time(_ text: String) -> Float? {
        guard let range = text.range(of: "time=0x") else { return nil }
        return UInt32(text[range.upperBound...].prefix(8), radix: 16).map(Float.init(bitPattern:))
    }
}
