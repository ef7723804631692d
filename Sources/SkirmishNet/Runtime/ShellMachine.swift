import SkirmishWire

/// One slot of a ``Shell``: a value machine that owns a connection and decides when to open and close its socket.
///
/// A swarm's bot (persona steps, agent, backoff) and an ``AsyncClientSession`` are both machines; the shell gives
/// them a socket, link emulation and a place on the wake heap, and never looks inside. Every entry point takes the
/// time and a ``ShellIO`` to append to; the shell executes it after the call. Machines keep no link to the shell or
/// to each other: what all machines of a shell share comes in as the shell's `environment`.
@_spi(Runtime)
public protocol ShellMachine {
    /// The protocol the machine's connection speaks.
    associatedtype Connection: ClientProtocol
    /// What every machine of one shell shares (settings, metrics), passed to each call.
    associatedtype Environment: AnyObject

    /// When the machine next wants ``wake(now:environment:io:)``: its own timers and its connection's; `nil` when
    /// only a socket event can move it. (`mutating get` so that the shell reads it in place: a plain getter on a
    /// machine in an array may copy the machine first.)
    var nextWake: Instant? { mutating get }
    /// The machine is done and holds nothing: the shell frees its slot.
    var isFinished: Bool { mutating get }

    /// Called at or after ``nextWake``.
    mutating func wake(now: Instant, environment: Environment, io: inout ShellIO<Connection>)
    /// The socket asked for with ``ShellIO/openSocket(_:)`` is open (a UDP socket at once, a stream when connected).
    mutating func transportOpened(now: Instant, environment: Environment, io: inout ShellIO<Connection>)
    /// Bytes the socket read (valid only during the call).
    mutating func received(
        _ bytes: UnsafeRawBufferPointer, now: Instant, environment: Environment, io: inout ShellIO<Connection>)
    /// The socket could not open, failed, or the server closed the stream.
    mutating func transportFailed(
        _ reason: String, now: Instant, environment: Environment, io: inout ShellIO<Connection>)
}

/// Where and how a slot's socket connects.
@_spi(Runtime)
public struct SocketRequest: Sendable {
    /// The server and transport.
    public var target: Target
    /// The emulated link the socket's packets cross, both ways.
    public var link: LinkProfile
    /// Seeds the link emulation.
    public var seed: UInt64

    /// A socket to `target` over `link`, seeded with `seed`.
    public init(target: Target, link: LinkProfile = .perfect, seed: UInt64 = 1) {
        self.target = target
        self.link = link
        self.seed = seed
    }
}

/// What one call into a ``ShellMachine`` leaves for the shell: the connection's actions (packets to write; events and
/// metrics the machine has already handled) and socket requests, each in order with the packets.
@_spi(Runtime)
public struct ShellIO<Connection: ClientProtocol> {
    /// The connection's packets, events and metrics; pass it to the connection's entry points.
    public var actions = ClientActions<Connection>()

    /// What a machine asked of its socket.
    public enum Operation: Sendable {
        case open(SocketRequest)
        case close
    }

    /// Socket operations, each after the packets written before it was asked for.
    @usableFromInline var pending: [(afterPackets: Int, operation: Operation)] = []
    @usableFromInline var counted = 0

    /// An empty buffer.
    public init() {}

    /// Socket operations, each after the packets written before it was asked for.
    @inlinable
    public var operations: [(afterPackets: Int, operation: Operation)] { pending }

    /// Opens a socket for the slot (closing the one it has): ``ShellMachine/transportOpened(now:environment:io:)``
    /// follows, or ``ShellMachine/transportFailed(_:now:environment:io:)``. Packets written before this call go to
    /// the old socket.
    @inlinable
    public mutating func openSocket(_ request: SocketRequest) {
        pending.append((actions.packetCount, .open(request)))
    }

    /// Closes the slot's socket after the packets written so far.
    @inlinable
    public mutating func closeSocket() {
        pending.append((actions.packetCount, .close))
    }

    /// Bytes in the packets written so far (for a machine's own byte counts).
    @inlinable
    public var bytesWritten: Int { actions.used }

    /// Bytes of the packets written since the last call, for a machine that counts what it sends.
    @inlinable
    public mutating func takeWrittenBytes() -> Int {
        defer { counted = actions.used }
        return actions.used - counted
    }

    /// Forgets everything, keeping the storage.
    @inlinable
    public mutating func removeAll() {
        counted = 0
        actions.removeAll()
        pending.removeAll(keepingCapacity: true)
    }
}
