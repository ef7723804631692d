import NIOCore
import SkirmishWire

/// A ``ClientSession`` for async code: tests, the CLI's one-off clients and the practice opponent.
///
/// The session itself stays confined to its event loop; this wrapper forwards calls to the loop and delivers the
/// session's events as an `AsyncStream`.
public final class AsyncClientSession: Sendable {
    /// Everything the session reports, in order.
    public let events: AsyncStream<SessionEvent>
    public let eventLoop: any EventLoop
    private let session: NIOLoopBound<ClientSession>

    private init(events: AsyncStream<SessionEvent>, eventLoop: any EventLoop, session: NIOLoopBound<ClientSession>) {
        self.events = events
        self.eventLoop = eventLoop
        self.session = session
    }

    /// Creates the session on `eventLoop` and starts its handshake; watch ``events`` for `.connected`.
    public static func connect(
        _ configuration: ClientSession.Configuration, on eventLoop: any EventLoop
    ) async throws -> AsyncClientSession {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .unbounded)
        var selfTimed = configuration
        selfTimed.selfTimed = true
        let configuration = selfTimed
        let bound = try await eventLoop.submit {
            let session = ClientSession(configuration: configuration, eventLoop: eventLoop) { event in
                continuation.yield(event)
            }
            session.connect()
            return NIOLoopBound(session, eventLoop: eventLoop)
        }.get()
        return AsyncClientSession(events: stream, eventLoop: eventLoop, session: bound)
    }

    public func send(_ message: Message) {
        eventLoop.execute { [session] in session.value.send(message) }
    }

    public func sendRaw(_ bytes: [UInt8]) {
        eventLoop.execute { [session] in session.value.sendRaw(bytes) }
    }

    public func suspend() {
        eventLoop.execute { [session] in session.value.suspend() }
    }

    public func resume() {
        eventLoop.execute { [session] in session.value.resume() }
    }

    public func disconnect(reason: DisconnectReason = .quit) async {
        try? await eventLoop.submit { [session] in session.value.disconnect(reason: reason) }.get()
    }

    /// The session's state now.
    public func state() async throws -> ClientSession.State {
        try await eventLoop.submit { [session] in session.value.state }.get()
    }

    /// The session's reliability counters now.
    public func stats() async throws -> EndpointStats {
        try await eventLoop.submit { [session] in session.value.stats }.get()
    }
}
