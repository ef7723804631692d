import NIOCore
import SkirmishOpponent
import SkirmishScript
import SkirmishSwarm
import SkirmishWire

/// A running opponent, from any thread: its seat, its progress and a way to stop it.
package struct OpponentSeat: Sendable {
    /// Where the server seated it: peer, match and seat.
    package let welcome: Welcome
    /// The difficulty it plays at.
    package let difficulty: Opponent.Level
    /// Completes when its match starts (both players at the table); fails when it ends first.
    package let started: EventLoopFuture<Void>
    /// Completes with why it stopped: the match is over, nobody came, the connection failed.
    package let ended: EventLoopFuture<String>
    let report: SeatReport
    let runner: AgentRunner
    let player: AgentRunner.Player

    /// The newest snapshot it received, in its own frame: `them` is the other player's paddle, mirrored.
    package func lastSnapshot() async throws -> TableSnapshot? { report.lastSnapshot }

    /// Inputs it has sent so far.
    package func inputsSent() async throws -> Int { report.inputsSent }

    /// Leaves the table (a running match is forfeited).
    package func stop() async {
        await runner.stop(player)
        report.ended("stopped")
    }
}
