import NIOCore
import NIOPosix
import SkirmishWire

/// One player's connection to a server: a ``ClientConnection`` (the protocol, a pure state machine) carried over a
/// socket that a ``ClientLoop`` owns, with the persona's emulated link.
///
/// The thin shell of the client runtime, as `ServerLoop` is the server's: it opens and closes the socket, passes
/// bytes and time to the connection, and writes the packets the connection leaves in its ``ClientConnection/Actions``.
/// Everything else — what the packets mean, timers, resume — is the connection's. A UDP socket is the loop's own
/// (epoll, a fixed buffer, nothing allocated per packet); a TCP or WebSocket channel lives on a SwiftNIO loop and its
/// reads hop to the client loop through the ``StreamDelegate``.
///
/// Confined to its client loop, and stored inline in its owner (a bot), so it costs no reference counting.
package struct Session {
    /// Where and how to connect.
    package struct Configuration: Sendable {
        package var target: Target
        package var connection: ClientConnection.Configuration
        package var link: LinkProfile = .perfect
        /// Seeds link emulation.
        package var seed: UInt64 = 1
        /// The target's address, resolved once by the owner; `nil`: resolved at each connect.
        package var resolvedAddress: SocketAddress?
        /// Where a UDP socket takes its local port (`nil`: the kernel picks one).
        package var localPorts: LocalPortPool?
        /// The NIO loops that carry TCP and WebSocket channels (unused over UDP).
        package var streamLoops: (any EventLoopGroup)?
        /// Where this session starts numbering its sockets. An owner that reuses a slot for a new session gives each
        /// a different base, so a late event of the old session's channel is never taken for the new one's.
        package var firstGeneration: UInt32 = 0

        package init(target: Target, connection: ClientConnection.Configuration) {
            self.target = target
            self.connection = connection
        }
    }

    private enum Socket {
        case none
        case datagram(fd: Int32, port: Int?)
        case opening
        case stream(any Channel)
    }

    package let configuration: Configuration
    package private(set) var connection: ClientConnection
    private var socket = Socket.none
    private var outbound: LinkEmulator?
    private var inbound: LinkEmulator?
    /// Counts sockets: a late read, a delayed packet or a stream event of an earlier socket is ignored.
    package private(set) var generation: UInt32 = 0
    private var remote: SocketAddress?

    package init(configuration: Configuration, now: NIODeadline) {
        self.configuration = configuration
        generation = configuration.firstGeneration
        var connection = configuration.connection
        connection.mode = configuration.target.transport == .udp ? .datagram : .stream
        self.connection = ClientConnection(configuration: connection, now: now)
        if !configuration.link.isPerfect {
            outbound = LinkEmulator(profile: configuration.link, seed: configuration.seed)
            inbound = LinkEmulator(profile: configuration.link, seed: configuration.seed ^ 0x5EED_1111)
        }
    }

    /// The connection's state.
    package var state: ClientConnection.State { connection.state }

    /// What an owner checks after each call, read in one go.
    package struct Status: Sendable {
        /// When ``tick(now:on:into:)`` next has work (`.distantFuture`: none).
        package var deadline: NIODeadline
        /// A resume's handshake is in flight.
        package var isResuming: Bool
        /// A message sent now is stamped (see ``ClientConnection/acceptsSends``).
        package var acceptsSends: Bool
        /// Packets lost and reliable resends so far.
        package var lost: UInt64
        package var resends: UInt64
        /// The current socket's generation.
        package var generation: UInt32
    }

    /// The session's ``Status``. `mutating` although it changes nothing: an owner that keeps its session in a stored
    /// optional reads it in place this way, where reading a property would copy the whole session (its buffers and
    /// configuration, with a retain for each reference in them) on every packet.
    package mutating func status() -> Status {
        var resuming = false
        if case .resuming = connection.state { resuming = true }
        let counts = connection.lossCounts
        return Status(
            deadline: nextDeadline, isResuming: resuming, acceptsSends: connection.acceptsSends, lost: counts.lost,
            resends: counts.resends, generation: generation)
    }

    /// The current socket's generation, read in place for the same reason as ``status()`` but without building the
    /// rest: it is checked on every datagram.
    package mutating func socketGeneration() -> UInt32 { generation }

    /// Whether a datagram or stream event with this generation belongs to the current socket.
    package func isCurrent(_ generation: UInt32) -> Bool { generation == self.generation }

    // MARK: Opening and closing

    /// Opens the socket and starts the handshake; a socket that cannot open ends the connection with a transport
    /// error (in `actions`).
    package mutating func connect(
        slot: UInt32, on loop: ClientLoop, delegate: any StreamDelegate, now: NIODeadline,
        into actions: inout ClientConnection.Actions
    ) {
        open(slot: slot, on: loop, delegate: delegate, now: now, into: &actions)
        guard case .datagram = socket else { return }
        connection.connect(now: now, into: &actions)
    }

    /// Reconnects with the resume token on a new socket, keeping the reliable stream (see
    /// ``ClientConnection/resume(now:into:)``).
    package mutating func resume(
        slot: UInt32, on loop: ClientLoop, delegate: any StreamDelegate, now: NIODeadline,
        into actions: inout ClientConnection.Actions
    ) {
        closeSocket(on: loop, now: now)
        open(slot: slot, on: loop, delegate: delegate, now: now, into: &actions)
        resumeWhenOpen = true
        guard case .datagram = socket else { return }
        resumeWhenOpen = false
        connection.resume(now: now, into: &actions)
    }

    private var resumeWhenOpen = false

    /// Drops the socket without a goodbye (a phone changing networks); ``resume(slot:on:delegate:now:into:)`` comes
    /// back.
    package mutating func suspend(on loop: ClientLoop, now: NIODeadline, into actions: inout ClientConnection.Actions) {
        connection.suspend(now: now, into: &actions)
        closeSocket(on: loop, now: now)
    }

    /// Says goodbye (when seated) and closes the socket; `sent` hears of the goodbye as of any packet.
    package mutating func close(
        reason: DisconnectReason, on loop: ClientLoop, now: NIODeadline, sent: (MessageType, Int) -> Void = { _, _ in }
    ) {
        var actions = ClientConnection.Actions()
        connection.close(reason: reason, now: now, into: &actions)
        write(actions.packets, on: loop, now: now, sent: sent)
        closeSocket(on: loop, now: now)
    }

    /// The next event of `actions` that still belongs to this connection (see ``ClientConnection/nextEvent(from:)``).
    package mutating func nextEvent(from actions: inout ClientConnection.Actions) -> ClientConnection.Event? {
        connection.nextEvent(from: &actions)
    }

    /// The datagram token of the current socket: the owner's slot (24 bits) and the socket's generation (8 bits).
    package func token(slot: UInt32) -> UInt32 { slot << 8 | (generation & 0xFF) }

    private mutating func open(
        slot: UInt32, on loop: ClientLoop, delegate: any StreamDelegate, now: NIODeadline,
        into actions: inout ClientConnection.Actions
    ) {
        generation &+= 1
        let target = configuration.target
        switch target.transport {
        case .udp:
            let address: SocketAddress
            do {
                address =
                    try remote ?? configuration.resolvedAddress
                    ?? SocketAddress.makeAddressResolvingHost(target.host, port: target.port)
            } catch {
                return connection.transportFailed("cannot resolve \(target.host): \(error)", now: now, into: &actions)
            }
            remote = address
            var lastError: ClientLoopError?
            // A pooled port some other program holds is skipped for another (up to 8 tries).
            for _ in 0..<8 {
                let port = configuration.localPorts?.take(now: now)
                do {
                    let fd = try loop.openDatagram(to: address, localPort: port, token: token(slot: slot))
                    socket = .datagram(fd: fd, port: port)
                    return
                } catch {
                    lastError = error
                    if let port { configuration.localPorts?.giveBack(port, now: now) }
                    if port == nil { break }
                }
            }
            connection.transportFailed(
                "\(lastError.map { "\($0)" } ?? "cannot open a socket")", now: now, into: &actions)
        case .tcp, .webSocket:
            guard let group = configuration.streamLoops else {
                return connection.transportFailed(
                    "no event loop for \(target.transport.rawValue) connections", now: now, into: &actions)
            }
            socket = .opening
            StreamConnector.connect(
                target: target, group: group, timeout: configuration.connection.handshakeTimeout,
                link: StreamLink(loop: loop, delegate: delegate, token: slot, generation: generation))
        }
    }

    /// The stream channel a connector opened (on the client loop): the handshake starts now.
    package mutating func streamOpened(
        _ channel: any Channel, now: NIODeadline, into actions: inout ClientConnection.Actions
    ) {
        socket = .stream(channel)
        if resumeWhenOpen {
            resumeWhenOpen = false
            connection.resume(now: now, into: &actions)
        } else if case .idle = connection.state {
            connection.connect(now: now, into: &actions)
        } else {
            connection.resume(now: now, into: &actions)
        }
    }

    private mutating func closeSocket(on loop: ClientLoop, now: NIODeadline) {
        generation &+= 1
        switch socket {
        case .datagram(let fd, let port):
            loop.closeDatagram(fd)
            if let port { configuration.localPorts?.giveBack(port, now: now) }
        case .stream(let channel):
            channel.close(promise: nil)
        case .none, .opening:
            break
        }
        socket = .none
        // What the link still held belonged to the old socket.
        delayedIn.removeAll()
        delayedOut.removeAll()
    }

    // MARK: Traffic

    /// Passes what the socket read to the connection, through the inbound link emulation (a packet the link delays
    /// is kept and delivered by ``tick(now:on:into:)`` when due).
    package mutating func receive(
        _ bytes: UnsafeRawBufferPointer, now: NIODeadline, into actions: inout ClientConnection.Actions
    ) {
        guard var link = inbound else { return connection.receive(bytes, now: now, into: &actions) }
        let fate = link.fate()
        inbound = link
        for delay in [fate.first, fate.second].compactMap({ $0 }) {
            Self.insert(Delayed(due: now + delay, bytes: Array(bytes)), into: &delayedIn)
        }
    }

    /// When ``tick(now:on:into:)`` next has work: the connection's timers or a packet the link held back.
    package var nextDeadline: NIODeadline {
        var due = connection.nextDeadline
        if let first = delayedIn.first { due = min(due, first.due) }
        if let first = delayedOut.first { due = min(due, first.due) }
        return due
    }

    /// Delivers and writes what the emulated link held back until now, then runs the connection's timers.
    package mutating func tick(now: NIODeadline, on loop: ClientLoop, into actions: inout ClientConnection.Actions) {
        while let first = delayedIn.first, first.due <= now {
            delayedIn.removeFirst()
            first.bytes.withUnsafeBytes { connection.receive($0, now: now, into: &actions) }
        }
        while let first = delayedOut.first, first.due <= now {
            delayedOut.removeFirst()
            first.bytes.withUnsafeBytes { raw in
                loop.sendBuffer.copyMemory(from: raw)
                put(size: raw.count, on: loop)
            }
        }
        connection.tick(now: now, into: &actions)
    }

    /// Sends a message with its type's delivery class (see ``ClientConnection/send(_:now:into:)``).
    package mutating func send(_ message: Message, now: NIODeadline, into actions: inout ClientConnection.Actions) {
        connection.send(message, now: now, into: &actions)
    }

    /// The transport failed under the connection (a stream closed, a socket error).
    package mutating func transportFailed(
        _ text: String, now: NIODeadline, into actions: inout ClientConnection.Actions
    ) {
        connection.transportFailed(text, now: now, into: &actions)
    }

    /// Writes packets the connection produced, calling `sent` with each one's type and size (for counters).
    package mutating func write(
        _ packets: [Packet], on loop: ClientLoop, now: NIODeadline = .now(),
        sent: (MessageType, Int) -> Void = { _, _ in }
    ) {
        for packet in packets {
            let size: Int
            do throws(EncodeError) {
                size = try connection.encode(packet, into: loop.sendBuffer)
            } catch {
                continue
            }
            sent(packet.message.type, size)
            transmit(size: size, on: loop, now: now)
        }
    }

    /// Sends bytes as given (rogue traffic), through the same link: over UDP with the session's trailer once it has
    /// a key (see ``ClientConnection/seal(_:length:)``).
    package mutating func writeRaw(_ bytes: [UInt8], on loop: ClientLoop, now: NIODeadline) {
        let size = min(bytes.count, loop.sendBuffer.count - SessionKey.trailerSize)
        bytes.withUnsafeBytes { raw in
            loop.sendBuffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<size]))
        }
        transmit(size: connection.seal(loop.sendBuffer, length: size) ?? size, on: loop, now: now)
    }

    /// Sends the first `size` bytes of the loop's send buffer, or keeps them for later when the link delays them.
    private mutating func transmit(size: Int, on loop: ClientLoop, now: NIODeadline) {
        guard var link = outbound else { return put(size: size, on: loop) }
        let fate = link.fate()
        outbound = link
        for delay in [fate.first, fate.second].compactMap({ $0 }) {
            let bytes = Array(UnsafeRawBufferPointer(rebasing: loop.sendBuffer[0..<size]))
            Self.insert(Delayed(due: now + delay, bytes: bytes), into: &delayedOut)
        }
    }

    private func put(size: Int, on loop: ClientLoop) {
        switch socket {
        case .datagram(let fd, _):
            _ = loop.sendDatagram(fd, count: size)
        case .stream(let channel):
            StreamConnector.write(
                UnsafeRawBufferPointer(rebasing: loop.sendBuffer[0..<size]), to: channel,
                transport: configuration.target.transport)
        case .none, .opening:
            break
        }
    }

    private struct Delayed {
        var due: NIODeadline
        var bytes: [UInt8]
    }

    /// Packets the emulated link holds, earliest first (bounded by the link's rate times its delay).
    private var delayedIn: [Delayed] = []
    private var delayedOut: [Delayed] = []

    private static func insert(_ packet: Delayed, into queue: inout [Delayed]) {
        var index = queue.count
        while index > 0, queue[index - 1].due > packet.due { index -= 1 }
        queue.insert(packet, at: index)
    }
}
