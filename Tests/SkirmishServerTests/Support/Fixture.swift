import Logging
import NIOCore
import NIOPosix
import SkirmishGames
import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishServer

/// A reference server on free loopback ports, and clients for it.
struct ServerFixture {
    let server: ReferenceServer
    let group: MultiThreadedEventLoopGroup

    static func start(
        logger: Logger = Logger(label: "skirmish.server"), rejectionLogInterval: TimeAmount = .seconds(10),
        _ configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> ServerFixture {
        var configuration = ServerConfiguration()
        configure(&configuration)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let server = try await ReferenceServer.start(
            configuration: configuration, group: group, logger: logger, rejectionLogInterval: rejectionLogInterval)
        return ServerFixture(server: server, group: group)
    }

    func target(_ transport: Transport) throws -> Target {
        switch transport {
        case .udp: Target(transport: .udp, host: "127.0.0.1", port: try #require(server.addresses.udp?.port))
        case .tcp: Target(transport: .tcp, host: "127.0.0.1", port: try #require(server.addresses.tcp?.port))
        case .webSocket:
            Target(
                transport: .webSocket, host: "127.0.0.1", port: try #require(server.addresses.http?.port), path: "/ws")
        }
    }

    func client(
        _ transport: Transport, game: GameKind, seats: UInt8, name: String, link: LinkProfile = .perfect,
        seed: UInt64 = 1, match: UInt32 = 0, keepalive: TimeAmount? = nil
    ) async throws -> AsyncClientSession {
        var configuration = AsyncClientSession.Configuration(
            target: try target(transport), game: game, seats: seats, name: name, seed: seed)
        configuration.link = link
        configuration.connection.match = match
        if let keepalive { configuration.connection.reliability.keepaliveInterval = keepalive }
        return try await AsyncClientSession.connect(configuration)
    }

    func stats() async throws -> ServerStats { try await server.stats() }

    func stop() async {
        await server.shutdown()
        try? await group.shutdownGracefully()
    }
}

struct Timeout: Error, CustomStringConvertible {
    var limit: Duration
    var description: String { "gave up after \(limit)" }
}

/// Runs `body`, failing with ``Timeout`` when it takes longer than `limit` (a deadline, not a synchronisation sleep).
/// How long a whole Puck match to seven may take before a test calls it hung. On an idle machine one plays out in
/// 60–90 s of the server's 60 Hz ticks; a server starved of CPU (a busy CI machine) ticks slower and the match takes
/// longer in wall time though nothing is wrong, so this guards against a hang, not a slow machine (once beside two
/// spinning cores a match outlasted the 90 s this used to be).
let wholePuckMatch = Duration.seconds(240)

func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw Timeout(limit: limit)
        }
        let result = try await group.next()!
        group.cancelAll()
        return result
    }
}

/// A simple Puck striker: winds up behind a slow puck, then drives through it toward the far goal.
enum Striker {
    static func target(_ snapshot: TableSnapshot, tick: Int, phase: Int) -> PuckTarget {
        let puck = snapshot.puck
        if puck.y >= 215 {
            let windingUp = ((tick + phase) / 24) % 2 == 0
            if abs(puck.vx) + abs(puck.vy) < 1.5, windingUp { return PuckTarget(x: puck.x, y: min(puck.y + 100, 440)) }
            return PuckTarget(x: puck.x + (puck.x < 160 ? 8 : -8), y: min(puck.y + 25, 440))
        }
        return PuckTarget(x: 160 + (puck.x - 160) * 0.5, y: 400)
    }
}

struct PuckResult: Sendable {
    var over: PuckMatchOver
    var desyncs: Int
    var snapshots: Int
    var seat: Int
    /// Inputs this client sent after its session had already received the match's end: answers to snapshots it
    /// was still working through (a stalled test process), each bound to reach the server after the match ended.
    var sentAfterTheEnd = 0
}

/// Plays one Puck match to its end, checking every server message against a replica.
///
/// `seat` is the seat from a Welcome the caller already took from the event stream; otherwise the Welcome is awaited.
func playPuck(_ session: AsyncClientSession, phase: Int, seat knownSeat: Int? = nil) async throws -> PuckResult {
    var seat = knownSeat ?? 0
    var replica = PuckReplica(seat: seat)
    var desyncs = 0
    var snapshots = 0
    var step: UInt32 = 0
    var sentAt: [Instant] = []
    for await event in session.events {
        switch event {
        case .stateChanged(.seated(let welcome)):
            seat = Int(welcome.seat)
            replica = PuckReplica(seat: seat)
        case .stateChanged(.closed(let cause)):
            throw PlayError(text: "disconnected: \(cause)")
        case .message(.tableSnapshot(let snapshot), _):
            snapshots += 1
            if case .desync = replica.apply(snapshot) { desyncs += 1 }
            if snapshot.phase == .playing || snapshot.phase == .goalPause {
                step &+= 1
                let target = Striker.target(snapshot, tick: Int(snapshot.tick), phase: seat * 7)
                session.send(.paddleState(PaddleState(inputStep: step, x: target.x, y: target.y, vx: 0, vy: 0)))
                sentAt.append(.now())
            }
        case .message(.goalScored(let goal), _):
            if case .desync = replica.apply(goal) { desyncs += 1 }
        case .message(.puckMatchOver(let over), let receivedAt):
            if case .desync = replica.apply(over) { desyncs += 1 }
            return PuckResult(
                over: over, desyncs: desyncs, snapshots: snapshots, seat: seat,
                sentAfterTheEnd: sentAt.filter { $0 >= receivedAt }.count)
        default:
            break
        }
    }
    throw PlayError(text: "event stream ended")
}

struct PlayError: Error, CustomStringConvertible {
    var text: String
    var description: String { text }
}

struct SnapResult: Sendable {
    var winner: UInt32
    var desyncs: Int
    var turns: Int
}

/// Plays one Snap table to its end: signs in, readies, turns when activated, calls snap on every pair.
func playSnap(_ session: AsyncClientSession, name: String, turnLimit: Int = SnapGame.turnLimit) async throws
    -> SnapResult
{
    var me: UInt32 = 0
    var ready: ServerReady?
    var replica: SnapReplica?
    var desyncs = 0
    var turns = 0
    for await event in session.events {
        switch event {
        case .stateChanged(.seated(let welcome)):
            me = welcome.peer
        case .stateChanged(.closed(let cause)):
            throw PlayError(text: "disconnected: \(cause)")
        case .message(let message, _):
            switch message {
            case .signInRequest:
                session.send(.signInResponse(SignInResponse(name: name)))
            case .serverReady(let received):
                ready = received
                session.send(.clientReady)
            case .dealCards(let deal):
                replica = try SnapReplica(ready: try #require(ready), deal: deal, turnLimit: turnLimit)
                session.send(.clientDealtCards)
            case .activatePlayer(let active):
                if case .desync = replica?.applyActivate(active) { desyncs += 1 }
                if active.peer == me { session.send(.clientTurnedCard) }
            case .cardTurned(let turned):
                turns += 1
                if case .desync = replica?.apply(turned) { desyncs += 1 }
                if replica?.game.hasPair == true { session.send(.playerShouldSnap) }
            case .playerCalledSnap(let called):
                if case .desync = replica?.apply(called) { desyncs += 1 }
            case .otherClientQuit(let quit):
                if case .desync = replica?.applyQuit(quit) { desyncs += 1 }
            case .snapGameOver(let over):
                if case .desync = replica?.apply(over) { desyncs += 1 }
                return SnapResult(winner: over.winner, desyncs: desyncs, turns: turns)
            default:
                break
            }
        default:
            break
        }
    }
    throw PlayError(text: "event stream ended")
}

/// Waits until `session` is connected and returns its Welcome.
func connected(_ session: AsyncClientSession) async throws -> Welcome {
    for await event in session.events {
        switch event {
        case .stateChanged(.seated(let welcome)): return welcome
        case .stateChanged(.closed(let cause)): throw PlayError(text: "disconnected: \(cause)")
        default: continue
        }
    }
    throw PlayError(text: "event stream ended")
}
