import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishOpponent
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// The seam between `skirmish practice` and the AI: creates one opponent and starts it playing.
///
/// Everything else in practice (the lobby, the page, the command) only sees the ``OpponentSeat`` this returns. The
/// opponent is the swarm's `ai` behaviour, run by an ``SkirmishSwarm/AgentRunner`` like any other client: 60 inputs
/// a second, a ping every 200 ms so its latency estimate stays fresh.
package enum PracticeOpponent {
    /// Connects an opponent at `difficulty` to `target` and returns once the server has seated it.
    ///
    /// - Parameters:
    ///   - match: a match to join, or 0 for a new table.
    ///   - joinTimeout: the opponent leaves when its match has not started by then.
    /// - Throws: why it could not be seated (server unreachable, rejected, handshake timeout).
    package static func start(
        target: Target, difficulty: Opponent.Level, match: UInt32 = 0, joinTimeout: Duration = .seconds(15),
        on runner: AgentRunner
    ) async throws -> OpponentSeat {
        let persona = Persona(
            name: "ai-\(difficulty.rawValue)", game: .puck, behavior: .ai, inputRate: 60,
            difficulty: difficulty)
        var configuration = AgentRunner.Configuration(target: target, persona: persona)
        configuration.match = match
        configuration.pingInterval = Opponent.pingInterval
        let report = SeatReport(loop: MultiThreadedEventLoopGroup.singleton.next())
        let player = try await runner.start(configuration) { context in
            PracticeAgent(
                inner: AIPlayer(context: &context, difficulty: difficulty, inputRate: context.persona.inputRate),
                report: report, joinTimeout: joinTimeout)
        }
        let welcome: Welcome
        do {
            welcome = try await report.seatedPromise.futureResult.get()
        } catch {
            await runner.stop(player)
            throw error
        }
        return OpponentSeat(
            welcome: welcome, difficulty: difficulty, started: report.startedPromise.futureResult,
            ended: report.endedPromise.futureResult, report: report, runner: runner, player: player)
    }
}
