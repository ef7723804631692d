import NIOCore
import SkirmishWire

/// A running opponent, from any thread: its seat, its progress and a way to stop it.
public struct OpponentSeat: Sendable {
    /// Where the server seated it: peer, match and seat.
    public let welcome: Welcome
    /// The difficulty it plays at.
    public let difficulty: Difficulty
    /// Completes when its match starts (both players at the table); fails when it ends first.
    public let started: EventLoopFuture<Void>
    /// Completes with why it stopped: the match is over, nobody came, the connection failed.
    public let ended: EventLoopFuture<String>
    let client: NIOLoopBound<OpponentClient>

    /// The newest snapshot it received, in its own frame: `them` is the other player's paddle, mirrored.
    public func lastSnapshot() async throws -> TableSnapshot? {
        try await client.eventLoop.submit { [client] in client.value.lastSnapshot }.get()
    }

    /// Inputs it has sent so far.
    public func inputsSent() async throws -> Int {
        try await client.eventLoop.submit { [client] in client.value.inputsSent }.get()
    }

    /// Leaves the table (a running match is forfeited).
    public func stop() async {
        try? await client.eventLoop.submit { [client] in client.value.stop(reason: "stopped") }.get()
    }
}
