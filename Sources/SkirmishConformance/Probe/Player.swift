import NIOCore
import SkirmishNet
import SkirmishWire
import Synchronization

/// One player of a conformance check on the client runtime: an ``AsyncClientSession`` (the one connection machine,
/// with its reliable delivery, resume and per-connection link emulation) whose events are recorded for the check to
/// read with a deadline.
final class Player: Sendable {
    /// What the session reported so far.
    struct Record: Sendable {
        /// The first Welcome, and the latest (a resume's).
        var welcome: Welcome?
        var latestWelcome: Welcome?
        /// Every state the connection moved through, in order.
        var states: [SnapConnection.State] = []
        /// Messages from the server, in delivery order (snapshots only the latest `snapshotLimit`).
        var chats: [String] = []
        var snapshots: [TableSnapshot] = []
        /// When the session read each of ``snapshots``, at the same index.
        var snapshotTimes: [Instant] = []
        var goals: [GoalScored] = []
        var over: PuckMatchOver?
        var rtts = 0
        /// Every other game message (Snap's and Suns'), in delivery order.
        var game: [Message] = []
    }

    let session: AsyncClientSession
    private let recorder: Recorder
    private let reader: Task<Void, Never>

    private init(session: AsyncClientSession) {
        self.session = session
        let recorder = Recorder()
        let events = session.events
        self.recorder = recorder
        reader = Task {
            for await event in events { recorder.take(event) }
        }
    }

    deinit { reader.cancel() }

    /// Connects a player to `target` for `game` with `seats` seats over `link` (emulated inside the session).
    static func connect(
        _ target: Target, game: GameKind = .puck, seats: UInt8 = 2, match: UInt32 = 0, name: String,
        link: LinkProfile = .perfect, seed: UInt64 = 1, streamLoops: any EventLoopGroup
    ) async throws -> Player {
        var configuration = AsyncClientSession.Configuration(
            target: target, game: game, seats: seats, name: name, seed: seed)
        configuration.connection.match = match
        configuration.link = link
        configuration.streamLoops = streamLoops
        // The check, not the session, decides how long a server may take: the session never gives up first.
        configuration.connection.handshakeTimeout = .seconds(10)
        return Player(session: try await AsyncClientSession.connect(configuration))
    }

    /// Keeps what the session reports, from the task that reads its events.
    private final class Recorder: Sendable {
        private let record = Mutex(Record())
        private static let snapshotLimit = 4_000

        var now: Record { record.withLock { $0 } }

        func take(_ event: SessionEvent) {
            record.withLock { record in
                switch event {
                case .stateChanged(let state):
                    record.states.append(state)
                    if case .seated(let welcome) = state {
                        if record.welcome == nil { record.welcome = welcome }
                        record.latestWelcome = welcome
                    }
                case .message(let message, let receivedAt):
                    switch message {
                    case .chat(let chat): record.chats.append(chat.text)
                    case .tableSnapshot(let snapshot):
                        if record.snapshots.count >= Self.snapshotLimit {
                            record.snapshots.removeFirst(500)
                            record.snapshotTimes.removeFirst(500)
                        }
                        record.snapshots.append(snapshot)
                        record.snapshotTimes.append(receivedAt)
                    case .goalScored(let goal): record.goals.append(goal)
                    case .puckMatchOver(let over): record.over = over
                    case .ping, .pong, .ack, .welcome, .challenge, .reject, .disconnect, .hello: break
                    default: record.game.append(message)
                    }
                case .rtt:
                    record.rtts += 1
                }
            }
        }
    }

    /// What the session reported so far.
    var now: Record { recorder.now }

    /// Waits until `condition` holds for the record, and returns it; `nil` when it does not within `limit`.
    func wait(_ limit: Duration, until condition: (Record) -> Bool) async -> Record? {
        let deadline = ContinuousClock.now + limit
        while true {
            let current = now
            if condition(current) { return current }
            if ContinuousClock.now >= deadline || Task.isCancelled { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits for the seat; the Welcome, or `nil` (with the last state seen) when none comes within `limit`.
    func seated(within limit: Duration) async -> Welcome? {
        await wait(limit) { $0.welcome != nil || $0.isClosed }?.welcome
    }

    /// Sends a message with its delivery class.
    func send(_ message: Message) { session.send(message) }

    /// Leaves with a Disconnect.
    func leave() async { await session.disconnect(reason: .quit) }
}

extension Player.Record {
    /// Whether the connection ended.
    var isClosed: Bool {
        if case .closed = states.last { return true }
        return false
    }

    /// The last state as text, for a failure line.
    var lastState: String {
        guard let state = states.last else { return "no state change" }
        switch state {
        case .idle: return "idle"
        case .handshaking: return "still handshaking"
        case .seated: return "seated"
        case .suspended: return "suspended"
        case .resuming: return "still resuming"
        case .closed(let cause): return "closed (\(cause))"
        }
    }
}

/// Lets players go (each says goodbye) without holding up the check that used them; the suite waits for the
/// goodbyes after each check (``Goodbyes/drain()``), so none is lost when the process ends and no player of one check
/// is still seated when the next starts.
func release(_ players: Player...) { release(players) }

/// Lets the players of an array go, as the variadic form does.
func release(_ players: [Player]) {
    Goodbyes.add(
        Task {
            for player in players { await player.leave() }
        })
}

/// Goodbyes under way, awaited between checks.
enum Goodbyes {
    private static let pending = Mutex<[Task<Void, Never>]>([])

    static func add(_ task: Task<Void, Never>) { pending.withLock { $0.append(task) } }

    /// Waits for every goodbye started so far.
    static func drain() async {
        let tasks = pending.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in tasks { await task.value }
    }
}
