import SkirmishWire

/// One client connection of a network protocol, as a value-type state machine: bytes and time in, bytes to write,
/// messages for the agent and metric events out.
///
/// This is how Skirmish speaks a server's own protocol. The runtime owns everything around a connection — sockets
/// (UDP, TCP, WebSocket), link emulation, the wake heap, personas and steps, backoff and reconnects, metrics,
/// thresholds and reports — and a plug-in owns what happens on the wire: its handshake, framing, reliability,
/// keep-alives and round-trip measurement. SNAP (the reference server's protocol, ``SnapConnection``), ENet and
/// DDNet are plug-ins like any a user writes; none has a privilege the others lack.
///
/// A conforming type never reads a clock and never touches a socket. Every entry point takes `now` and appends what
/// to do to a reusable ``ClientActions`` buffer: the runtime writes the bytes, hands the events to the bot's agent and
/// counts the metric events, then calls ``tick(now:into:)`` again at ``nextDeadline``. That is what lets a test play
/// whole sessions — handshakes, loss, resends, timeouts — by hand, without a socket or a sleep, and what lets one
/// loop drive tens of thousands of connections.
///
/// The hot path allocates nothing: encode into ``ClientActions/write(maxLength:_:)``'s buffer, decode from the
/// borrowed bytes of ``receive(_:now:into:)``, keep scratch storage in the value. The runtime is generic over the
/// conforming type, so calls are specialised: no existential, allocation or reference count per packet.
///
/// Lifecycle, as the runtime drives it:
/// 1. `init(configuration:setup:)` when a bot starts a session;
/// 2. ``start(now:into:)`` once the transport is open (a UDP socket at once, a TCP or WebSocket connection when it
///    is up): send the first handshake packet;
/// 3. ``receive(_:now:into:)`` for every datagram (UDP), every run of stream bytes (TCP: the plug-in frames the
///    stream itself) or every message (WebSocket), ``send(_:now:into:)`` for what the agent sends and
///    ``tick(now:into:)`` at ``nextDeadline``; report ``ClientActions/established(_:)`` once the server accepted the
///    player, ``ClientActions/closed(_:)`` when the connection ends on its own;
/// 4. ``close(now:into:)`` when the bot leaves (a polite goodbye), or ``transportFailed(_:now:into:)`` when the socket
///    does. Nothing is called after a close.
///
/// A protocol that can take a player's seat back after the socket went away (SNAP's resume token) implements
/// ``suspend(now:into:)`` and ``resume(now:into:)``; the defaults end the connection and start a new one.
///
/// Its metatype is `Sendable` (``SendableMetatype``): a catalogue's script decoders, which run wherever a script is
/// loaded, name the protocol's type.
public protocol ClientProtocol: SendableMetatype {
    /// What agents send and receive: the protocol's application messages, decoded.
    associatedtype Message
    /// The plug-in's options, decoded from a script's `protocol:` block (and a persona's overrides) by the decoder
    /// its catalogue entry registers.
    associatedtype Configuration: Sendable, Hashable
    /// What the plug-in tells the agent once the server accepted the player (SNAP: the `Welcome`).
    associatedtype Established

    /// The protocol's name, the transports it runs over and what it measures, fixed for the process.
    static var description: ProtocolDescription { get }

    /// Whether a connection with `configuration` can send or receive packets of kind `kind` (an index into
    /// ``ProtocolDescription/packetKinds``): only those series exist at 0 for its bots, so a protocol with many
    /// kinds does not give every persona a series for each. The default is every kind.
    static func expects(kind: Int, with configuration: Configuration) -> Bool

    /// A connection that has sent nothing yet; ``start(now:into:)`` begins its handshake.
    init(configuration: Configuration, setup: ConnectionSetup)

    /// When ``tick(now:into:)`` next has work (a resend, a keep-alive, a timeout); ``Instant/distantFuture`` when
    /// none. Read after every call, so it must be cheap.
    var nextDeadline: Instant { get }

    /// The transport is open: send what opens the connection (a connect request, a Hello).
    mutating func start(now: Instant, into actions: inout ClientActions<Self>)

    /// Bytes from the server: one datagram over UDP, one message over WebSocket, or the next run of bytes of a TCP
    /// stream (the plug-in frames it). The bytes are valid only during the call; anything kept must be copied into
    /// the value's own storage, bounded.
    mutating func receive(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>)

    /// Sends a message the agent produced, with whatever delivery the protocol gives it.
    mutating func send(_ message: Message, now: Instant, into actions: inout ClientActions<Self>)

    /// Runs what is due at `now`: resends, acknowledgements, keep-alives, timeouts.
    mutating func tick(now: Instant, into actions: inout ClientActions<Self>)

    /// The bot leaves: send the protocol's goodbye if it has one. The runtime closes the socket right after.
    mutating func close(now: Instant, into actions: inout ClientActions<Self>)

    /// The socket failed or the server closed the stream; `reason` says how. Report ``ClientActions/closed(_:)``.
    mutating func transportFailed(_ reason: String, now: Instant, into actions: inout ClientActions<Self>)

    /// Bytes exactly as given, bypassing the codec: hostile traffic for testing a server's defences (the `rogue`
    /// behaviour). A plug-in that authenticates its packets (SNAP's session trailer) seals them, since a hostile
    /// *player* is what they model; the default writes them as they are.
    mutating func sendRaw(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>)

    /// A number that names the connection's match or session in logs (SNAP: the match id); 0 when there is none.
    var matchID: UInt32 { get }

    /// The socket goes away without a goodbye (a phone changing networks); keep what a resume needs. The default
    /// ends the connection (``CloseReason/local``): a protocol without resume comes back with a new connection.
    mutating func suspend(now: Instant, into actions: inout ClientActions<Self>)

    /// A new socket is open after ``suspend(now:into:)``: ask for the player's seat back. The default starts afresh.
    mutating func resume(now: Instant, into actions: inout ClientActions<Self>)
}

extension ClientProtocol {
    /// No match id.
    public var matchID: UInt32 { 0 }

    /// Every kind.
    public static func expects(kind: Int, with configuration: Configuration) -> Bool { true }

    /// Writes the bytes unchanged.
    public mutating func sendRaw(_ bytes: UnsafeRawBufferPointer, now: Instant, into actions: inout ClientActions<Self>)
    {
        actions.write(bytes)
    }

    /// Ends the connection: without resume, a dropped socket is a closed connection.
    public mutating func suspend(now: Instant, into actions: inout ClientActions<Self>) {
        actions.closed(.local)
    }

    /// Starts a new handshake.
    public mutating func resume(now: Instant, into actions: inout ClientActions<Self>) {
        start(now: now, into: &actions)
    }
}
