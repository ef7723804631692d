import SkirmishWire

/// The machine behind one ``AsyncClientSession``: a ``SnapConnection`` whose events go to an `AsyncStream` instead of
/// an agent.
struct SessionMachine: ShellMachine {
    typealias Connection = SnapConnection

    /// What the sessions of one loop share: a count that names each.
    final class Environment {
        var opened: UInt64 = 0
    }

    /// Names the ``AsyncClientSession`` that owns this slot: a call from an earlier owner finds another number.
    let id: UInt64
    private(set) var connection: SnapConnection
    let request: SocketRequest
    let continuation: AsyncStream<SessionEvent>.Continuation
    /// Whether the session runs its own timers (tests drive them with ``AsyncClientSession/tick(now:)``).
    let selfTimed: Bool
    /// The state the stream last heard of.
    private var reported = SnapConnection.State.idle
    private var resumeWhenOpen = false
    private(set) var isFinished = false

    init(
        id: UInt64, configuration: SnapConnection.Configuration, setup: ConnectionSetup, request: SocketRequest,
        continuation: AsyncStream<SessionEvent>.Continuation, selfTimed: Bool
    ) {
        self.id = id
        connection = SnapConnection(configuration: configuration, setup: setup)
        self.request = request
        self.continuation = continuation
        self.selfTimed = selfTimed
    }

    var nextWake: Instant? {
        guard selfTimed else { return nil }
        let deadline = connection.nextDeadline
        return deadline == .distantFuture ? nil : deadline
    }

    mutating func wake(now: Instant, environment: Environment, io: inout ShellIO<SnapConnection>) {
        connection.tick(now: now, into: &io.actions)
        handle(&io, now: now)
    }

    mutating func transportOpened(now: Instant, environment: Environment, io: inout ShellIO<SnapConnection>) {
        if case .idle = connection.state, !resumeWhenOpen {
            connection.start(now: now, into: &io.actions)
        } else {
            resumeWhenOpen = false
            connection.resume(now: now, into: &io.actions)
        }
        handle(&io, now: now)
    }

    mutating func received(
        _ bytes: UnsafeRawBufferPointer, now: Instant, environment: Environment, io: inout ShellIO<SnapConnection>
    ) {
        connection.receive(bytes, now: now, into: &io.actions)
        handle(&io, now: now)
    }

    mutating func transportFailed(
        _ reason: String, now: Instant, environment: Environment, io: inout ShellIO<SnapConnection>
    ) {
        connection.transportFailed(reason, now: now, into: &io.actions)
        handle(&io, now: now)
    }

    // MARK: The owner's calls

    mutating func connect(io: inout ShellIO<SnapConnection>) {
        io.openSocket(request)
    }

    mutating func send(_ message: Message, now: Instant, io: inout ShellIO<SnapConnection>) {
        connection.send(message, now: now, into: &io.actions)
        handle(&io, now: now)
    }

    mutating func sendRaw(_ bytes: [UInt8], now: Instant, io: inout ShellIO<SnapConnection>) {
        bytes.withUnsafeBytes { connection.sendRaw($0, now: now, into: &io.actions) }
    }

    mutating func suspend(now: Instant, io: inout ShellIO<SnapConnection>) {
        connection.suspend(now: now, into: &io.actions)
        io.closeSocket()
        handle(&io, now: now)
    }

    mutating func resume(now: Instant, io: inout ShellIO<SnapConnection>) {
        resumeWhenOpen = true
        io.openSocket(request)
    }

    /// Says goodbye (when seated), closes the socket and ends the event stream.
    mutating func close(reason: DisconnectReason, now: Instant, io: inout ShellIO<SnapConnection>) {
        connection.close(reason: reason, now: now, into: &io.actions)
        io.closeSocket()
        continuation.finish()
        isFinished = true
    }

    /// Turns what the connection reported into stream events, then the state if it changed without an event.
    private mutating func handle(_ io: inout ShellIO<SnapConnection>, now: Instant) {
        while let metric = io.actions.nextMetric() {
            if case .roundTrip(let sample) = metric { continuation.yield(.rtt(sample)) }
        }
        while let event = io.actions.nextEvent() {
            switch event {
            case .established(let welcome), .resumed(let welcome): report(.seated(welcome))
            case .closed: report(connection.state)
            case .message(let message): continuation.yield(.message(message, receivedAt: now))
            }
        }
        // What the owner's own calls changed (handshaking, suspended, resuming) comes with no event of its own.
        if connection.state != reported { report(connection.state) }
    }

    private mutating func report(_ state: SnapConnection.State) {
        guard state != reported else { return }
        reported = state
        continuation.yield(.stateChanged(state))
    }
}
