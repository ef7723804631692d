import NIOCore
import SkirmishNet
import SkirmishOpponent
import SkirmishWire

/// The seam between `skirmish practice` and the AI: creates one opponent and starts it playing.
///
/// Everything else in practice (the lobby, the page, the command) only sees the ``OpponentSeat`` this returns, so the
/// brain behind it can change without touching them. The brain is the predicting AI of `SkirmishOpponent`
/// (``AIBrain``), driven by an ``OpponentClient`` like any network client.
public enum PracticeOpponent {
    /// Connects an opponent at `difficulty` to `target` and returns once the server has seated it.
    ///
    /// - Parameters:
    ///   - match: a match to join, or 0 for a new table.
    ///   - joinTimeout: the opponent leaves when its match has not started by then.
    /// - Throws: why it could not be seated (server unreachable, rejected, handshake timeout).
    public static func start(
        target: Target, difficulty: Difficulty, match: UInt32 = 0, joinTimeout: TimeAmount = .seconds(15),
        on loop: any EventLoop
    ) async throws -> OpponentSeat {
        var configuration = ClientSession.Configuration(
            target: target, game: .puck, seats: 2, name: "ai-\(difficulty.rawValue)")
        configuration.match = match
        let settings = configuration
        let client = try await loop.submit {
            let client = OpponentClient(
                brain: AIBrain(difficulty: difficulty), loop: loop, joinTimeout: joinTimeout)
            client.connect(settings)
            return NIOLoopBound(client, eventLoop: loop)
        }.get()
        let (seated, started, ended) = try await loop.submit {
            (client.value.seated.futureResult, client.value.started.futureResult, client.value.ended.futureResult)
        }.get()
        let welcome = try await seated.get()
        return OpponentSeat(welcome: welcome, difficulty: difficulty, started: started, ended: ended, client: client)
    }
}
