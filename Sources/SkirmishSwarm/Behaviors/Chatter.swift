import SkirmishNet
import SkirmishScript
import SkirmishWire

/// An agent that plays as `inner` does and chats every so often: the `chatter` behaviour of any protocol that chats.
///
/// It loads the server's chat relay path beside the game. The line's text names the persona and the bot, so a
/// server's chat log tells who said what; `message` turns it into the protocol's chat message.
public struct Chatter<Inner: Agent>: Agent {
    /// The protocol of the agent it wraps.
    public typealias Connection = Inner.Connection

    private var inner: Inner
    private let every: ClosedRange<Duration>
    private let message: @Sendable (String) -> Connection.Message
    private var nextChat: Instant?

    /// A chatter around `inner`, chatting every `every` with the protocol's chat `message`.
    public init(
        _ inner: Inner, every: ClosedRange<Duration>, message: @escaping @Sendable (String) -> Connection.Message
    ) {
        self.inner = inner
        self.every = every
        self.message = message
    }

    /// The earlier of its own next action and the inner agent's.
    public var nextWake: Instant? {
        guard let nextChat else { return inner.nextWake }
        return inner.nextWake.map { min($0, nextChat) } ?? nextChat
    }

    /// When the inner agent's match is over.
    public var isMatchOver: Bool { inner.isMatchOver }

    /// Tells the inner agent, and schedules its own next action.
    public mutating func established(_ established: Connection.Established, context: inout AgentContext<Connection>) {
        inner.established(established, context: &context)
        schedule(context: &context)
    }

    /// Tells the inner agent, and schedules its own next action again.
    public mutating func resumed(context: inout AgentContext<Connection>) {
        inner.resumed(context: &context)
        schedule(context: &context)
    }

    /// Passes the message to the inner agent.
    public mutating func received(_ message: Connection.Message, context: inout AgentContext<Connection>) {
        inner.received(message, context: &context)
    }

    /// Acts when its own action is due, then wakes the inner agent when that is due.
    public mutating func wake(context: inout AgentContext<Connection>) {
        if let due = nextChat, due <= context.now {
            context.send(message("gl hf from \(context.persona.name) #\(context.botNumber)"))
            schedule(context: &context)
        }
        if let due = inner.nextWake, due <= context.now { inner.wake(context: &context) }
    }

    /// Forgets its schedule and tells the inner agent.
    public mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<Connection>) {
        nextChat = nil
        inner.disconnected(reason, context: &context)
    }

    private mutating func schedule(context: inout AgentContext<Connection>) {
        nextChat = context.now + context.random.duration(in: every)
    }
}

/// An agent that plays as `inner` does and drops its socket every so often, coming back after a while: the
/// `reconnector` behaviour of any protocol (with resume where the protocol has one, a new connection where not).
public struct Reconnector<Inner: Agent>: Agent {
    /// The protocol of the agent it wraps.
    public typealias Connection = Inner.Connection

    private var inner: Inner
    private let every: ClosedRange<Duration>
    private let offlineFor: ClosedRange<Duration>
    private var nextDrop: Instant?

    /// A reconnector around `inner`: connected for a time drawn from `every`, then offline for one from `offlineFor`.
    public init(_ inner: Inner, every: ClosedRange<Duration>, offlineFor: ClosedRange<Duration>) {
        self.inner = inner
        self.every = every
        self.offlineFor = offlineFor
    }

    /// The earlier of its own next action and the inner agent's.
    public var nextWake: Instant? {
        guard let nextDrop else { return inner.nextWake }
        return inner.nextWake.map { min($0, nextDrop) } ?? nextDrop
    }

    /// When the inner agent's match is over.
    public var isMatchOver: Bool { inner.isMatchOver }

    /// Tells the inner agent, and schedules its own next action.
    public mutating func established(_ established: Connection.Established, context: inout AgentContext<Connection>) {
        inner.established(established, context: &context)
        nextDrop = context.now + context.random.duration(in: every)
    }

    /// Tells the inner agent, and schedules its own next action again.
    public mutating func resumed(context: inout AgentContext<Connection>) {
        inner.resumed(context: &context)
        nextDrop = context.now + context.random.duration(in: every)
    }

    /// Passes the message to the inner agent.
    public mutating func received(_ message: Connection.Message, context: inout AgentContext<Connection>) {
        inner.received(message, context: &context)
    }

    /// Acts when its own action is due, then wakes the inner agent when that is due.
    public mutating func wake(context: inout AgentContext<Connection>) {
        if let due = nextDrop, due <= context.now {
            nextDrop = nil
            return context.suspend(for: context.random.duration(in: offlineFor))
        }
        if let due = inner.nextWake, due <= context.now { inner.wake(context: &context) }
    }

    /// Forgets its schedule and tells the inner agent.
    public mutating func disconnected(_ reason: CloseReason, context: inout AgentContext<Connection>) {
        nextDrop = nil
        inner.disconnected(reason, context: &context)
    }
}

extension SeededRandom {
    /// A duration drawn uniformly from `range`, to the nanosecond.
    public mutating func duration(in range: ClosedRange<Duration>) -> Duration {
        let low = range.lowerBound.nanoseconds
        let high = range.upperBound.nanoseconds
        return .nanoseconds(high > low ? Int64.random(in: low...high, using: &self) : low)
    }
}
