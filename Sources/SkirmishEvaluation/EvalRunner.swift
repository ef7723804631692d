import Logging
import NIOCore
import NIOPosix
import SkirmishGames
import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishServer
import SkirmishSwarm
import SkirmishWire
import Synchronization

/// Plays evaluation sessions through the real protocol: each session gets its own embedded reference server on
/// loopback (UDP only), so seating needs no coordination, and its clients run on a separate event loop.
package struct EvalRunner: Sendable {
    /// Who the AI plays a match against.
    package enum Rival: String, Sendable, CaseIterable {
        /// The swarm's `chaser` behaviour, exactly as a script runs it (30 inputs a second).
        case chaser
        /// The swarm's `defender` behaviour, exactly as a script runs it.
        case defender
        /// The same AI with prediction switched off.
        case noPrediction = "no-prediction"
        /// The Robot Air Hockey Challenge's baseline agent, ported (``SkirmishOpponent/KalmanGoalie``).
        case kalman
        /// The human-like player model at each skill (``SkirmishOpponent/HumanPlayer``): the sparring partners of
        /// the difficulty matrix, not of the latency rows.
        case beginner, casual, skilled

        /// The rivals of every latency row: the scripted bots, the AI without prediction and the Kalman baseline.
        static let scripted: [Rival] = [.chaser, .defender, .noPrediction, .kalman]

        /// The human-like rivals, weakest first.
        static let humans: [Rival] = [.beginner, .casual, .skilled]

        /// The modelled person's skill, for a human-like rival.
        var skill: HumanPlayer.Skill? { HumanPlayer.Skill(rawValue: rawValue) }

        /// Whether the AI's matches against this rival are a target (PASS/MISS lines): the scripted bots and its
        /// no-prediction self; the Kalman baseline is the field's reference, reported beside them.
        var isTarget: Bool { self != .kalman }

        /// The swarm behaviour a scripted rival runs; `nil` for the AI's own baseline and the Kalman goalie.
        var behavior: BehaviorName? {
            switch self {
            case .chaser: .chaser
            case .defender: .defender
            case .noPrediction, .kalman, .beginner, .casual, .skilled: nil
            }
        }
    }

    /// What one shot session measured.
    package struct ShotSession: Sendable {
        /// The session's place in its row: sessions with the same number face the same shots.
        var series: Int = 0
        var probe: OpponentProbe
        var decisionNanos: Samples
        var lateNanos: Samples
        /// Why the AI's client stopped (`done` when it played all its shots).
        var ended: String
    }

    /// What one match measured, from the AI's side.
    package struct MatchSession: Sendable {
        var myScore: Int
        var theirScore: Int
        var completed: Bool
        var seconds: Double
        var probe: OpponentProbe?
        var decisionNanos: Samples
        var lateNanos: Samples
        /// Why the AI's client stopped (`over` when the match reached 7, `time limit` at the cap).
        var ended: String
        /// False when the match never started (a client could not join); it is left out of the win rates.
        var played = true
        /// An adaptive AI's controller at the end of the match; `nil` for a preset.
        var controller: AdaptiveDifficulty? = nil
    }

    package let serverLoop: any EventLoopGroup
    /// Where every evaluation player runs: the swarm's runtime, one client loop.
    package let clients: AgentRunner
    package let seed: UInt64
    package let progress: EvalProgress
    /// Sessions cut short are warnings, each finished one a debug line; each session's embedded server logs here
    /// too (with `session`), but only from notice up unless the logger is at debug, or every session would add its
    /// start and stop.
    package let logger: Logger

    package init(
        serverLoop: any EventLoopGroup, clients: AgentRunner, seed: UInt64, progress: EvalProgress,
        logger: Logger = Logger(label: "skirmish.ai-eval")
    ) {
        self.serverLoop = serverLoop
        self.clients = clients
        self.seed = seed
        self.progress = progress
        self.logger = logger
    }

    /// The logger a session's embedded server gets.
    private func serverLogger(session index: Int, kind: String) -> Logger {
        var server = logger
        server[metadataKey: "session"] = "\(kind)-\(index)"
        if server.logLevel > .debug { server.logLevel = max(server.logLevel, .notice) }
        return server
    }

    /// The link of a latency row: the one-way latency, ±20 % jitter (at least 1 ms) and 2 % loss, in both directions.
    package static func link(latencyMilliseconds: Int) -> LinkProfile {
        LinkProfile(
            latency: .milliseconds(Int64(latencyMilliseconds)),
            jitter: .milliseconds(Int64(max(1, latencyMilliseconds / 5))), loss: 0.02)
    }

    // MARK: Shots

    /// `shots` seeded shots at `defender` behind `link`; stops early at `deadline`. Every session with the same
    /// `series` number is served the same shots, whoever defends and whatever the link.
    package func shots(
        _ shots: Int, defender: ShotDefender, series: Int, link: LinkProfile, session index: Int,
        deadline: NIODeadline
    ) async throws -> ShotSession {
        var server = ServerConfiguration()
        server.tcp = nil
        server.http = nil
        server.shotMachine = ShotMachine.Configuration(seed: seed &+ UInt64(series) &* 0x9E37, defender: 1)
        let reference = try await ReferenceServer.start(
            configuration: server, group: serverLoop, logger: serverLogger(session: index, kind: "shots"))
        do {
            var session = try await play(
                shots, defender: defender, link: link, server: reference, session: index, deadline: deadline)
            session.series = series
            await reference.shutdown()
            logger.debug(
                "shot session finished",
                metadata: ["session": "shots-\(index)", "ended": "\(session.ended)", "shots": "\(shots)"])
            return session
        } catch {
            // One session that cannot play does not end the evaluation: it is reported as cut short.
            await reference.shutdown()
            logger.warning(
                "shot session cut short", metadata: ["session": "shots-\(index)", "error": "\(error)"])
            return ShotSession(
                series: series, probe: OpponentProbe(seat: 1, shotTarget: shots), decisionNanos: Samples(),
                lateNanos: Samples(), ended: "\(error)")
        }
    }

    private func play(
        _ shots: Int, defender: ShotDefender, link: LinkProfile, server reference: ReferenceServer,
        session index: Int, deadline: NIODeadline
    ) async throws -> ShotSession {
        guard let port = reference.addresses.udp?.port else { throw EvalError("the shot server did not bind UDP") }
        let target = Target(transport: .udp, host: "127.0.0.1", port: port)
        let feeder = try await client(
            target: target, match: 0, link: .perfect, name: "shooter", seed: 1, acts: false, probe: nil
        ) { seat in ScriptedPuckAgent(style: .idle, seat: seat, seed: 1) }
        let welcome = try await feeder.welcome(role: "the shooter")
        let seedForAI = seed &+ UInt64(index)
        let probe = OpponentProbe(seat: 1, shotTarget: shots)
        let ai: ClientHandle
        switch defender {
        case .ai(let configuration):
            ai = try await client(
                target: target, match: welcome.match, link: link, name: "ai", seed: seedForAI, acts: true, probe: probe,
                progress: progress
            ) { seat in Opponent(seat: seat, configuration: configuration, seed: seedForAI) }
        case .stillPaddle:
            ai = try await client(
                target: target, match: welcome.match, link: link, name: "still", seed: seedForAI, acts: true,
                probe: probe, progress: progress
            ) { _ in StillPaddle() }
        case .kalman:
            ai = try await client(
                target: target, match: welcome.match, link: link, name: "kalman", seed: seedForAI, acts: true,
                probe: probe, progress: progress
            ) { seat in KalmanGoalie(seat: seat) }
        }
        let result = try await ai.run(until: deadline)
        _ = await feeder.stop()
        guard let probe = result.probe else { throw EvalError("the AI's measurements were lost") }
        return ShotSession(
            probe: probe, decisionNanos: result.decisionNanos, lateNanos: result.lateNanos,
            ended: result.ended ?? "stopped")
    }

    // MARK: Matches

    /// One match of the AI (seat 0) against `rival`, both behind `link`, to 7 goals or `limit`; `adaptive` plays an
    /// ``SkirmishOpponent/AdaptiveOpponent`` instead of `configuration` (the rival `no-prediction` still plays
    /// `configuration` without prediction).
    package func match(
        configuration: OpponentConfiguration, adaptive: Bool = false, rival: Rival, link: LinkProfile,
        session index: Int, limit: Duration
    ) async throws -> MatchSession {
        var server = ServerConfiguration()
        server.tcp = nil
        server.http = nil
        let reference = try await ReferenceServer.start(
            configuration: server, group: serverLoop, logger: serverLogger(session: index, kind: "match"))
        do {
            let session = try await match(
                configuration: configuration, adaptive: adaptive, rival: rival, link: link, server: reference,
                session: index, limit: limit)
            await reference.shutdown()
            logger.debug(
                "match session finished",
                metadata: [
                    "session": "match-\(index)", "rival": "\(rival.rawValue)", "ended": "\(session.ended)",
                    "score": "\(session.myScore)-\(session.theirScore)",
                ])
            return session
        } catch {
            await reference.shutdown()
            logger.warning(
                "match session not played",
                metadata: ["session": "match-\(index)", "rival": "\(rival.rawValue)", "error": "\(error)"])
            progress.add(.matches, 1)
            return MatchSession(
                myScore: 0, theirScore: 0, completed: false, seconds: 0, probe: nil, decisionNanos: Samples(),
                lateNanos: Samples(), ended: "\(error)", played: false)
        }
    }

    private func match(
        configuration: OpponentConfiguration, adaptive: Bool, rival: Rival, link: LinkProfile,
        server reference: ReferenceServer, session index: Int, limit: Duration
    ) async throws -> MatchSession {
        guard let port = reference.addresses.udp?.port else { throw EvalError("the match server did not bind UDP") }
        let target = Target(transport: .udp, host: "127.0.0.1", port: port)
        let seedForAI = seed &+ 0x1000 &+ UInt64(index)
        let ai: ClientHandle
        if adaptive {
            ai = try await client(
                target: target, match: 0, link: link, name: "ai-adaptive", seed: seedForAI, acts: true, probe: nil
            ) { seat in AdaptiveOpponent(seat: seat, seed: seedForAI) }
        } else {
            ai = try await client(
                target: target, match: 0, link: link, name: "ai", seed: seedForAI, acts: true,
                probe: OpponentProbe(seat: 0, shotTarget: nil)
            ) { seat in Opponent(seat: seat, configuration: configuration, seed: seedForAI) }
        }
        let welcome = try await ai.welcome(role: "the AI")
        let rivalSeed = seed &+ 0x2000 &+ UInt64(index)
        let started = NIODeadline.now()
        let deadline = started + TimeAmount(limit)
        let result: EvalRecord.Result
        switch rival {
        case .chaser, .defender:
            // The registry's own behaviour on the same client runtime: the bot a swarm script would run.
            let behavior = rival.behavior ?? .chaser
            var rivalConfiguration = AgentRunner.Configuration(
                target: target, persona: Persona(name: rival.rawValue, game: .puck, behavior: behavior, link: link))
            rivalConfiguration.match = welcome.match
            rivalConfiguration.pingInterval = .seconds(1)
            let style: PuckStyle = behavior == .defender ? .defender : .chaser
            let other = try await clients.start(rivalConfiguration) { context in
                PuckPlayer(context: &context, style: style, inputRate: context.persona.inputRate)
            }
            result = try await ai.run(until: deadline)
            await clients.stop(other)
        case .noPrediction:
            let blind = configuration.withoutPrediction
            let other = try await client(
                target: target, match: welcome.match, link: link, name: "ai-blind", seed: rivalSeed, acts: true,
                probe: nil
            ) { seat in Opponent(seat: seat, configuration: blind, seed: rivalSeed) }
            result = try await ai.run(until: deadline)
            _ = await other.stop()
        case .kalman:
            let other = try await client(
                target: target, match: welcome.match, link: link, name: "kalman", seed: rivalSeed, acts: true,
                probe: nil
            ) { seat in KalmanGoalie(seat: seat) }
            result = try await ai.run(until: deadline)
            _ = await other.stop()
        case .beginner, .casual, .skilled:
            let skill = rival.skill ?? .casual
            let other = try await client(
                target: target, match: welcome.match, link: link, name: rival.rawValue, seed: rivalSeed, acts: true,
                probe: nil
            ) { _ in HumanPlayer(skill: skill, seed: rivalSeed) }
            result = try await ai.run(until: deadline)
            _ = await other.stop()
        }
        let elapsed = (NIODeadline.now() - started).seconds
        progress.add(.matches, 1)
        return MatchSession(
            myScore: Int(result.myScore), theirScore: Int(result.theirScore), completed: result.over != nil,
            seconds: elapsed, probe: result.probe, decisionNanos: result.decisionNanos, lateNanos: result.lateNanos,
            ended: result.ended ?? "stopped", controller: result.controller)
    }

    // MARK: Clients

    private func client<Inner: PuckAgent>(
        target: Target, match: UInt32, link: LinkProfile, name: String, seed: UInt64, acts: Bool,
        probe: OpponentProbe?, progress: EvalProgress? = nil, makeAgent: @escaping @Sendable (Int) -> Inner
    ) async throws -> ClientHandle {
        var configuration = AgentRunner.Configuration(
            target: target, persona: Persona(name: name, game: .puck, behavior: .ai, link: link))
        configuration.match = match
        configuration.pingInterval = Opponent.pingInterval
        let record = EvalRecord(probe: probe)
        let player = try await clients.start(configuration) { _ in
            EvalAgent(record: record, acts: acts, progress: progress, makeInner: makeAgent)
        }
        return ClientHandle(record: record, runner: clients, player: player)
    }
}

/// Counts finished work across sessions for the progress line.
package final class EvalProgress: Sendable {
    /// Shots played, matches played, and seconds of the attack headroom's lock-step play.
    package enum Unit: Sendable { case shots, matches, headroomSeconds }

    private let shots = Atomic<Int>(0)
    private let matches = Atomic<Int>(0)
    private let headroom = Atomic<Int>(0)

    package init() {}

    package func add(_ unit: Unit, _ count: Int) {
        switch unit {
        case .shots: shots.add(count, ordering: .relaxed)
        case .matches: matches.add(count, ordering: .relaxed)
        case .headroomSeconds: headroom.add(count, ordering: .relaxed)
        }
    }

    package var counts: (shots: Int, matches: Int, headroomSeconds: Int) {
        (shots.load(ordering: .relaxed), matches.load(ordering: .relaxed), headroom.load(ordering: .relaxed))
    }
}
