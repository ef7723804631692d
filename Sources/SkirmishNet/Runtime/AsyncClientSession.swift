import NIOCore
import SkirmishWire

/// One connection to a game server for async code: tests, the CLI's one-off clients.
///
/// The same runtime a swarm's bots use — a ``Session`` carrying a ``ClientConnection`` over a UDP socket of a
/// ``ClientLoop`` (or a TCP or WebSocket channel on SwiftNIO loops) — with what a bot group would do for it done by a
/// small shell on the loop: it runs the session's timers, writes its packets and delivers what happens as
/// ``events``. Every call hops to the loop; the session itself never leaves it.
package final class AsyncClientSession: Sendable {
    /// Where to connect and what to ask for.
    package struct Configuration: Sendable {
        package var target: Target
        /// The game, seats, match and name asked for, and the delivery rules and timeouts; its `mode` follows the
        /// target's transport whatever it is set to.
        package var connection: ClientConnection.Configuration
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
            connection = ClientConnection.Configuration(
                game: game, seats: seats, name: name, mode: target.transport == .udp ? .datagram : .stream)
            self.seed = seed
        }
    }

    /// The loop is already another delegate's (a swarm's bot group takes every datagram of its loop).
    package struct LoopInUse: Error, Sendable, CustomStringConvertible {
        package var description: String {
            "this ClientLoop already delivers its datagrams to another owner (a swarm's); connect on "
                + "ClientLoop.singleton or on a ClientLoop made for these sessions"
        }
    }

    /// Everything the session reports, in order; ends after ``disconnect(reason:)``.
    package let events: AsyncStream<SessionEvent>
    /// The loop the session lives on.
    package let eventLoop: ClientLoop
    private let host: NIOLoopBound<SessionHost>
    private let slot: Int
    private let id: UInt64

    private init(
        events: AsyncStream<SessionEvent>, eventLoop: ClientLoop, host: NIOLoopBound<SessionHost>, slot: Int, id: UInt64
    ) {
        self.events = events
        self.eventLoop = eventLoop
        self.host = host
        self.slot = slot
        self.id = id
    }

    deinit {
        let (host, slot, id) = (host, slot, id)
        eventLoop.execute { host.value.close(reason: .quit, slot: slot, id: id) }
    }

    /// Opens the session on `loop` and starts its handshake; watch ``events`` for `.stateChanged(.seated)`.
    ///
    /// Throws ``LoopInUse`` when `loop` belongs to a swarm. Sessions on one loop share it: thousands fit, as bots do.
    package static func connect(_ configuration: Configuration, on loop: ClientLoop = .singleton) async throws
        -> AsyncClientSession
    {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .unbounded)
        let (host, slot, id) = try await loop.submit {
            guard let host = SessionHost.on(loop) else { throw LoopInUse() }
            let (slot, id) = host.open(configuration, continuation: continuation, now: .now())
            return (NIOLoopBound(host, eventLoop: loop), slot, id)
        }.get()
        return AsyncClientSession(events: stream, eventLoop: loop, host: host, slot: slot, id: id)
    }

    /// Sends a message with its type's delivery class (see ``ClientConnection/send(_:now:)``).
    package func send(_ message: Message) {
        eventLoop.execute { [host, slot, id] in host.value.send(message, slot: slot, id: id) }
    }

    /// Sends bytes as given (over UDP sealed with the session trailer, as a hostile player would), through the
    /// session's link: hostile traffic for the server's defences.
    package func sendRaw(_ bytes: [UInt8]) {
        eventLoop.execute { [host, slot, id] in host.value.sendRaw(bytes, slot: slot, id: id) }
    }

    /// Drops the socket without a goodbye, as when a phone changes networks; ``resume()`` comes back.
    package func suspend() {
        eventLoop.execute { [host, slot, id] in host.value.suspend(slot: slot, id: id) }
    }

    /// Asks for the seat back from a new socket with the Welcome's resume token, keeping the reliable stream.
    package func resume() {
        eventLoop.execute { [host, slot, id] in host.value.resume(slot: slot, id: id) }
    }

    /// Says goodbye (when seated), closes the socket and ends ``events``; no state event follows.
    package func disconnect(reason: DisconnectReason = .quit) async {
        try? await eventLoop.submit { [host, slot, id] in host.value.close(reason: reason, slot: slot, id: id) }.get()
    }

    /// The connection's state now (`.closed(.local)` once disconnected).
    package func state() async throws -> ClientConnection.State {
        try await eventLoop.submit { [host, slot, id] in host.value.state(slot: slot, id: id) ?? .closed(.local) }
            .get()
    }

    /// The connection's counters now: packets, resends, loss, duplicates, smoothed RTT (zero once disconnected).
    package func stats() async throws -> ClientConnection.Stats {
        try await eventLoop.submit { [host, slot, id] in host.value.stats(slot: slot, id: id) ?? .init() }.get()
    }

    /// Runs the session's timers as if the time were `now`, and returns the state after; for a session configured
    /// not to run its own timers (tests).
    func tick(now: NIODeadline) async throws -> ClientConnection.State {
        try await eventLoop.submit { [host, slot, id] in
            host.value.tick(now: now, slot: slot, id: id) ?? .closed(.local)
        }.get()
    }
}
