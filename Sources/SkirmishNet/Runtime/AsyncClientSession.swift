import NIOCore
import NIOPosix
import SkirmishWire

/// One SNAP connection for async code: tests, the conformance suite, the CLI's one-off clients.
///
/// The same runtime a swarm's bots use — a ``SnapConnection`` in a slot of a ``Shell`` on a ``ClientLoop`` (a UDP
/// socket of the loop, or a TCP or WebSocket channel on SwiftNIO loops) — with its events delivered as ``events``
/// instead of to an agent. Every call hops to the loop; the connection itself never leaves it. Sessions on one loop
/// share one shell: thousands fit, as bots do.
package final class AsyncClientSession: Sendable {
    /// Where to connect and what to ask for.
    package struct Configuration: Sendable {
        package var target: Target
        /// The game, seats, match and name asked for, and the delivery rules and timeouts.
        package var connection: SnapConnection.Configuration
        /// The emulated link the session's packets cross, both ways.
        package var link: LinkProfile = .perfect
        /// Seeds link emulation.
        package var seed: UInt64
        /// The NIO loops that carry TCP and WebSocket channels (`nil`: `MultiThreadedEventLoopGroup.singleton`).
        package var streamLoops: (any EventLoopGroup)?
        /// Whether the session runs its own timers; `false` leaves them to ``AsyncClientSession/tick(now:)``, which
        /// is how a test plays out a timeout with an injected clock instead of waiting for it.
        var selfTimed = true

        package init(target: Target, game: GameKind, seats: UInt8, name: String, seed: UInt64 = 1) {
            self.target = target
            connection = SnapConnection.Configuration(game: game, seats: seats)
            connection.name = name
            // Round trips are measured when the owner pings, as before the runtime pinged on its own.
            connection.pingInterval = nil
            self.seed = seed
        }
    }

    /// Everything the session reports, in order; ends after ``disconnect(reason:)``.
    package let events: AsyncStream<SessionEvent>
    /// The loop the session lives on.
    package let eventLoop: ClientLoop
    private let shell: NIOLoopBound<Shell<SessionMachine>>
    private let slot: UInt32
    private let id: UInt64

    private init(
        events: AsyncStream<SessionEvent>, eventLoop: ClientLoop, shell: NIOLoopBound<Shell<SessionMachine>>,
        slot: UInt32, id: UInt64
    ) {
        self.events = events
        self.eventLoop = eventLoop
        self.shell = shell
        self.slot = slot
        self.id = id
    }

    deinit {
        let (shell, slot, id) = (shell, slot, id)
        eventLoop.execute { Self.update(shell.value, slot, id) { $0.close(reason: .quit, now: .now(), io: &$1) } }
    }

    /// Opens the session on `loop` and starts its handshake; watch ``events`` for `.stateChanged(.seated)`.
    package static func connect(_ configuration: Configuration, on loop: ClientLoop = .singleton) async throws
        -> AsyncClientSession
    {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .unbounded)
        let (shell, slot, id) = try await loop.submit {
            let shell = Self.shell(on: loop, streamLoops: configuration.streamLoops)
            shell.environment.opened &+= 1
            let id = shell.environment.opened
            let machine = SessionMachine(
                id: id, configuration: configuration.connection,
                setup: ConnectionSetup(
                    transport: configuration.target.transport, player: Int(truncatingIfNeeded: id),
                    name: configuration.connection.name ?? "player", seed: configuration.seed),
                request: SocketRequest(
                    target: configuration.target, link: configuration.link, seed: configuration.seed),
                continuation: continuation, selfTimed: configuration.selfTimed)
            let now = Instant.now()
            let slot = shell.add(machine, now: now)
            shell.update(slot, now: now) { machine, _, io in machine.connect(io: &io) }
            return (NIOLoopBound(shell, eventLoop: loop), slot, id)
        }.get()
        return AsyncClientSession(events: stream, eventLoop: loop, shell: shell, slot: slot, id: id)
    }

    /// The sessions' shell of `loop`, made on first use and kept by the loop.
    private static func shell(on loop: ClientLoop, streamLoops: (any EventLoopGroup)?) -> Shell<SessionMachine> {
        if let shell = loop.sessionShell as? Shell<SessionMachine> { return shell }
        let shell = Shell<SessionMachine>(
            loop: loop, environment: SessionMachine.Environment(),
            settings: ShellSettings(streamLoops: streamLoops ?? MultiThreadedEventLoopGroup.singleton))
        shell.attach()
        loop.sessionShell = shell
        return shell
    }

    @discardableResult
    private static func update<Result>(
        _ shell: Shell<SessionMachine>, _ slot: UInt32, _ id: UInt64,
        _ body: (inout SessionMachine, inout ShellIO<SnapConnection>) -> Result
    ) -> Result? {
        guard shell.read(slot, { $0.id == id }) == true else { return nil }
        return shell.update(slot, now: .now()) { machine, _, io in body(&machine, &io) }
    }

    private func onLoop(_ body: @escaping @Sendable (inout SessionMachine, inout ShellIO<SnapConnection>) -> Void) {
        eventLoop.execute { [shell, slot, id] in Self.update(shell.value, slot, id, body) }
    }

    /// Sends a message with its type's delivery class (see ``SnapConnection/send(_:now:into:)``).
    package func send(_ message: Message) {
        onLoop { $0.send(message, now: .now(), io: &$1) }
    }

    /// Sends bytes as given (over UDP sealed with the session trailer, as a hostile player would), through the
    /// session's link: hostile traffic for the server's defences.
    package func sendRaw(_ bytes: [UInt8]) {
        onLoop { $0.sendRaw(bytes, now: .now(), io: &$1) }
    }

    /// Drops the socket without a goodbye, as when a phone changes networks; ``resume()`` comes back.
    package func suspend() {
        onLoop { $0.suspend(now: .now(), io: &$1) }
    }

    /// Asks for the seat back from a new socket with the Welcome's resume token, keeping the reliable stream.
    package func resume() {
        onLoop { $0.resume(now: .now(), io: &$1) }
    }

    /// Says goodbye (when seated), closes the socket and ends ``events``; no state event follows.
    package func disconnect(reason: DisconnectReason = .quit) async {
        try? await eventLoop.submit { [shell, slot, id] in
            Self.update(shell.value, slot, id) { $0.close(reason: reason, now: .now(), io: &$1) }
        }.get()
    }

    /// The connection's state now (`.closed(.local)` once disconnected).
    package func state() async throws -> SnapConnection.State {
        try await eventLoop.submit { [shell, slot, id] in
            let state: SnapConnection.State?? = shell.value.read(slot) { $0.id == id ? $0.connection.state : nil }
            return (state ?? nil) ?? .closed(.local)
        }.get()
    }

    /// The connection's counters now: packets, resends, loss, duplicates, smoothed RTT (zero once disconnected).
    package func stats() async throws -> SnapConnection.Stats {
        try await eventLoop.submit { [shell, slot, id] in
            let stats: SnapConnection.Stats?? = shell.value.read(slot) { $0.id == id ? $0.connection.stats : nil }
            return (stats ?? nil) ?? .init()
        }.get()
    }

    /// Runs the session's timers as if the time were `now`, and returns the state after; for a session configured
    /// not to run its own timers (tests).
    func tick(now: Instant) async throws -> SnapConnection.State {
        try await eventLoop.submit { [shell, slot, id] in
            Self.update(shell.value, slot, id) { machine, io -> SnapConnection.State in
                machine.wake(now: now, environment: shell.value.environment, io: &io)
                return machine.connection.state
            } ?? .closed(.local)
        }.get()
    }
}
