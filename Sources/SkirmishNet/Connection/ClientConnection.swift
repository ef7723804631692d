import NIOCore
import SkirmishWire

/// The client side of the Skirmish protocol as a value: packets and time in, packets to write and events out.
///
/// It runs the handshake (over UDP: Hello, the server's stateless-cookie Challenge, Hello with the cookie, Welcome;
/// over TCP and WebSocket: Hello, Welcome), keeps the seat's ``ReliableEndpoint``, answers Pings, measures round
/// trips from Pongs, notices silence and unacknowledged sends, and resumes a dropped seat with the Welcome's token
/// while the reliable stream carries on underneath. It never reads a clock and never touches a socket: every entry
/// point takes `now`, and what to do comes back as ``Actions`` for a thin shell (one socket, one event loop) to
/// execute. That is what lets the tests play whole handshakes, drops and lossy exchanges by hand, without a socket
/// or a sleep, and lets a swarm drive thousands of connections from one timer (``tick(now:)`` at ``nextDeadline``).
///
/// Every mutating entry point comes in two forms: one returning ``Actions``, and one appending to an `inout`
/// ``Actions`` the shell reuses (calling ``Actions/removeAll()`` after executing it), so that the hot path allocates
/// nothing per packet once the arrays have grown to a working size.
package struct ClientConnection: Sendable {
    /// Where the connection is; the only state there is (no flags beside it).
    package enum State: Sendable, Hashable {
        /// Created; ``connect(now:)`` starts the handshake.
        case idle
        /// Hello sent, no Welcome yet.
        case handshaking
        /// The server gave this player a seat.
        case seated(Welcome)
        /// The socket went away without a goodbye; the seat is held by the server for a while. Timers stop.
        case suspended(Welcome)
        /// A resume's Hello is out; what the old connection missed may already be arriving.
        case resuming(Welcome)
        /// Over, for the reason given.
        case closed(Cause)
    }

    package let configuration: Configuration
    package private(set) var state = State.idle

    private var endpoint: ReliableEndpoint
    /// The next Hello to send: the cookie and resume token change, the rest is fixed at init.
    private var hello: Hello
    private var welcome: Welcome?
    private var handshakeDeadline = NIODeadline.distantFuture
    private var nextHello = NIODeadline.distantFuture
    private var challenges = 0
    /// The session key from the Welcome (UDP only): every later datagram is sealed and checked with it.
    private var key: SessionKey?
    /// Reliable messages sent while away over a stream transport, which has no resend queue to keep them in; sent
    /// after the resume's Welcome. Bounded by `maxPendingReliable`, like the datagram endpoint's queue.
    private var away: [Message] = []
    /// Scratch for what one packet releases; kept so its storage is reused.
    private var inbox: [Message] = []
    /// Bumped each time the owner ends the connection (``close(reason:now:)``, ``transportFailed(_:now:)``): events
    /// produced before are stale.
    private var epoch: UInt32 = 0
    private var counters = Stats()

    /// Creates an idle connection; ``connect(now:)`` starts it.
    package init(configuration: Configuration, now: NIODeadline) {
        self.configuration = configuration
        var reliability = configuration.reliability
        reliability.mode = configuration.mode
        endpoint = ReliableEndpoint(configuration: reliability, now: now)
        hello = Hello(
            game: configuration.game, seats: configuration.seats, match: configuration.match,
            name: Self.wireName(configuration.name))
    }

    /// When ``tick(now:)`` next has work; `.distantFuture` when none (idle, suspended, closed).
    package var nextDeadline: NIODeadline {
        switch state {
        case .handshaking, .resuming: min(nextHello, handshakeDeadline)
        case .seated: endpoint.nextDeadline
        case .idle, .suspended, .closed: .distantFuture
        }
    }

    /// The token the last Welcome carried, for a resume; 0 until the first Welcome.
    package var resumeToken: UInt64 { welcome?.resumeToken ?? 0 }

    /// The connection's counters, with the reliable endpoint's.
    /// Packets lost and reliable resends so far: what a shell reports after every call, without building ``stats``.
    package var lossCounts: (lost: UInt64, resends: UInt64) { (endpoint.stats.lost, endpoint.stats.resends) }

    /// Whether a message sent now is stamped (seated, or away with a seat to come back to).
    package var acceptsSends: Bool {
        switch state {
        case .seated, .suspended, .resuming: true
        case .idle, .handshaking, .closed: false
        }
    }

    package var stats: Stats {
        var stats = counters
        let endpointStats = endpoint.stats
        stats.lost = endpointStats.lost
        stats.resends = endpointStats.resends
        stats.duplicates = endpointStats.duplicates
        stats.stale = endpointStats.stale
        stats.farFuture = endpointStats.farFuture
        stats.unsentAcks = endpointStats.unsentAcks
        stats.srtt = endpointStats.srtt
        return stats
    }

    // MARK: Connecting

    /// Starts the handshake: idle → handshaking, a Hello with a zero cookie and no resume token.
    package mutating func connect(now: NIODeadline) -> Actions {
        var actions = Actions()
        connect(now: now, into: &actions)
        return actions
    }

    /// Starts the handshake, appending to `actions`; see ``connect(now:)``.
    package mutating func connect(now: NIODeadline, into actions: inout Actions) {
        guard case .idle = state else { return }
        var reliability = configuration.reliability
        reliability.mode = configuration.mode
        // The clocks start with the connection, not with the value.
        endpoint = ReliableEndpoint(configuration: reliability, now: now)
        state = .handshaking
        startHandshake(token: 0, now: now, into: &actions)
    }

    /// The socket went away without a goodbye (a phone changed networks): seated or resuming → suspended.
    ///
    /// Timers stop: nothing can be sent or heard until ``resume(now:)``, and the server holds the seat meanwhile.
    package mutating func suspend(now: NIODeadline) -> Actions {
        var actions = Actions()
        suspend(now: now, into: &actions)
        return actions
    }

    /// Suspends, appending to `actions` (nothing, today); see ``suspend(now:)``.
    package mutating func suspend(now: NIODeadline, into actions: inout Actions) {
        switch state {
        case .seated(let welcome), .resuming(let welcome):
            state = .suspended(welcome)
            stopHandshakeTimers()
        case .idle, .handshaking, .suspended, .closed:
            break
        }
    }

    /// Asks for the seat back on a new socket: a Hello with the Welcome's resume token (→ resuming).
    ///
    /// Allowed when suspended or seated, or closed by something the network did (silence, unacknowledged sends, a
    /// transport error) once a Welcome gave a token; otherwise nothing happens. The cookie round starts over (a new
    /// address needs a new cookie), and the reliable stream carries on underneath: reliable messages sent meanwhile
    /// are numbered now and sent once the Welcome is back, and what the server resends from the old connection is
    /// delivered as it arrives, so no goal or card is lost.
    package mutating func resume(now: NIODeadline) -> Actions {
        var actions = Actions()
        resume(now: now, into: &actions)
        return actions
    }

    /// Resumes, appending to `actions`; see ``resume(now:)``.
    package mutating func resume(now: NIODeadline, into actions: inout Actions) {
        guard let welcome, welcome.resumeToken != 0 else { return }
        switch state {
        case .suspended, .seated, .closed(.silence), .closed(.unacknowledged), .closed(.transportError):
            state = .resuming(welcome)
            startHandshake(token: welcome.resumeToken, now: now, into: &actions)
        case .idle, .handshaking, .resuming, .closed:
            break
        }
    }

    /// Says goodbye (a `Disconnect` when seated) and closes with ``Cause/local``.
    ///
    /// No ``Event/closed(_:)`` follows: the caller knows. Events produced before, not yet taken with
    /// ``nextEvent(from:)``, become stale.
    package mutating func close(reason: DisconnectReason, now: NIODeadline) -> Actions {
        var actions = Actions()
        close(reason: reason, now: now, into: &actions)
        return actions
    }

    /// Closes, appending to `actions`; see ``close(reason:now:)``.
    package mutating func close(reason: DisconnectReason, now: NIODeadline, into actions: inout Actions) {
        if case .seated = state { emit(Packet(number: 0, .disconnect(Disconnect(reason: reason))), into: &actions) }
        epoch &+= 1
        state = .closed(.local)
        stopHandshakeTimers()
        away.removeAll()
    }

    /// The shell's socket failed: closes with ``Cause/transportError(_:)`` and a ``Event/closed(_:)`` event, unless
    /// already closed. Events produced before, not yet taken with ``nextEvent(from:)``, become stale.
    package mutating func transportFailed(_ text: String, now: NIODeadline) -> Actions {
        var actions = Actions()
        transportFailed(text, now: now, into: &actions)
        return actions
    }

    /// Reports a transport failure, appending to `actions`; see ``transportFailed(_:now:)``.
    package mutating func transportFailed(_ text: String, now: NIODeadline, into actions: inout Actions) {
        if case .closed = state { return }
        epoch &+= 1
        finish(.transportError(text), into: &actions)
    }

    private mutating func startHandshake(token: UInt64, now: NIODeadline, into actions: inout Actions) {
        hello.cookie = .zero
        hello.resumeToken = token
        challenges = 0
        handshakeDeadline = now + configuration.handshakeTimeout
        sendHello(now: now, into: &actions)
    }

    private mutating func sendHello(now: NIODeadline, into actions: inout Actions) {
        emit(Packet(number: 0, .hello(hello)), into: &actions)
        // A stream transport delivers the Hello or fails: only a datagram can be lost and needs resending.
        nextHello = configuration.mode == .datagram ? now + configuration.helloInterval : .distantFuture
    }

    private mutating func stopHandshakeTimers() {
        handshakeDeadline = .distantFuture
        nextHello = .distantFuture
    }

    /// Ends the connection on its own account, with a ``Event/closed(_:)`` event.
    private mutating func finish(_ cause: Cause, into actions: inout Actions) {
        if case .closed = state { return }
        state = .closed(cause)
        stopHandshakeTimers()
        away.removeAll()
        report(.closed(cause), into: &actions)
    }

    // MARK: Sending

    /// Sends a message with its type's delivery class.
    ///
    /// Seated: numbered by the endpoint and sent. Suspended or resuming: a reliable message is numbered now and sent
    /// once the resume's Welcome is back (the server would refuse it from the new address before then); an
    /// unreliable one would be stale by then and is skipped. Idle, handshaking or closed: dropped and counted in
    /// ``Stats/droppedSends``. Too many reliable messages awaiting an ack close the connection with
    /// ``Cause/unacknowledged``.
    package mutating func send(_ message: Message, now: NIODeadline) -> Actions {
        var actions = Actions()
        send(message, now: now, into: &actions)
        return actions
    }

    /// Sends, appending to `actions`; see ``send(_:now:)``.
    package mutating func send(_ message: Message, now: NIODeadline, into actions: inout Actions) {
        switch state {
        case .seated:
            do throws(EndpointError) {
                emit(try endpoint.stamp(message, now: now), into: &actions)
            } catch {
                finish(.unacknowledged, into: &actions)
            }
        case .suspended, .resuming:
            guard message.type.delivery == .reliable else { return }
            guard configuration.mode == .datagram else {
                guard away.count < configuration.reliability.maxPendingReliable else {
                    return finish(.unacknowledged, into: &actions)
                }
                away.append(message)
                return
            }
            do throws(EndpointError) {
                _ = try endpoint.stamp(message, now: now)
            } catch {
                finish(.unacknowledged, into: &actions)
            }
        case .idle, .handshaking, .closed:
            counters.droppedSends &+= 1
        }
    }

    private mutating func emit(_ packet: Packet, into actions: inout Actions) {
        counters.packetsSent &+= 1
        actions.packets.append(packet)
    }

    private func report(_ event: Event, into actions: inout Actions) {
        actions.events.append(event)
        actions.epochs.append(epoch)
    }

    // MARK: Receiving

    /// Takes in one packet's bytes: a datagram, a TCP frame's body or a WebSocket message.
    ///
    /// Decoded with the transport's size limit (``WireLimits/maxDatagram`` or ``WireLimits/maxFrame``); what does
    /// not decode is counted by kind in ``Stats/decodeErrors`` and dropped.
    package mutating func receive(_ bytes: UnsafeRawBufferPointer, now: NIODeadline) -> Actions {
        var actions = Actions()
        receive(bytes, now: now, into: &actions)
        return actions
    }

    /// Takes in one packet's bytes, appending to `actions`; as the form that returns ``Actions``.
    ///
    /// Over UDP a datagram must carry the session's trailer once a Welcome gave a key (``SessionKey``); the only
    /// packets taken without one are a Challenge, and a Reject while a handshake is in flight. The first Welcome
    /// is checked with the key it carries (it cannot be checked with anything else). What fails is counted in
    /// ``Stats/unauthenticated`` and dropped before anything in it is acted on.
    package mutating func receive(_ bytes: UnsafeRawBufferPointer, now: NIODeadline, into actions: inout Actions) {
        guard configuration.mode == .datagram else {
            let packet: Packet
            do throws(DecodeError) {
                packet = try Packet.decode(bytes, maxSize: WireLimits.maxFrame)
            } catch {
                counters.decodeErrors.count(error)
                return
            }
            return receive(packet, now: now, into: &actions)
        }
        // The trailer does not count against the packet's limit (WireProtocol.md, "Session trailer").
        guard bytes.count <= WireLimits.maxDatagram + SessionKey.trailerSize else {
            return counters.decodeErrors.count(.tooLarge)
        }
        if let key, let body = key.open(bytes, from: .server) {
            do throws(DecodeError) {
                return receive(try Packet.decode(body, maxSize: WireLimits.maxDatagram), now: now, into: &actions)
            } catch {
                return counters.decodeErrors.count(error)
            }
        }
        let packet: Packet
        do throws(DecodeError) {
            packet = try Packet.decode(bytes, maxSize: WireLimits.maxDatagram)
        } catch .trailingBytes where key == nil {
            return receiveFirstWelcome(bytes, now: now, into: &actions)
        } catch {
            // Under a key, a datagram that neither verifies nor decodes bare is most likely forged.
            if key != nil { counters.unauthenticated &+= 1 } else { counters.decodeErrors.count(error) }
            return
        }
        let handshaking: Bool
        switch state {
        case .handshaking, .resuming: handshaking = true
        case .idle, .seated, .suspended, .closed: handshaking = false
        }
        switch packet.message {
        case .challenge: break
        case .reject where handshaking: break
        default:
            counters.unauthenticated &+= 1
            return
        }
        receive(packet, now: now, into: &actions)
    }

    /// A datagram before any key: only a Welcome sealed with the key it carries is taken.
    private mutating func receiveFirstWelcome(
        _ bytes: UnsafeRawBufferPointer, now: NIODeadline, into actions: inout Actions
    ) {
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - SessionKey.trailerSize)])
        guard case .handshaking = state, let packet = try? Packet.decode(body, maxSize: WireLimits.maxDatagram),
            case .welcome(let welcome) = packet.message, welcome.sessionKey != .zero,
            welcome.sessionKey.open(bytes, from: .server) != nil
        else {
            counters.unauthenticated &+= 1
            return
        }
        key = welcome.sessionKey
        receive(packet, now: now, into: &actions)
    }

    /// Encodes `packet` into `buffer` as this connection sends it, and returns its length.
    ///
    /// Over UDP with a session key, the trailer is appended (``SessionKey``): to every packet but a first-join
    /// Hello, and to a resume's Hello too, which proves the key to the server so that it hands over a seat whose
    /// old address still looks live. Allocates nothing.
    package func encode(_ packet: Packet, into buffer: UnsafeMutableRawBufferPointer) throws(EncodeError) -> Int {
        let length = try packet.encode(into: buffer)
        guard let sealed = seal(buffer, length: length) else {
            throw .bufferTooSmall(needed: length + SessionKey.trailerSize)
        }
        return sealed
    }

    /// Appends the session trailer to the `length` bytes at the start of `buffer` when this is a UDP connection
    /// with a key; returns the new length (`length` when there is nothing to add), or `nil` when it does not fit.
    ///
    /// Raw bytes (a rogue bot's malformed packets) go out sealed too: they model a hostile *player*, whose packets
    /// the server must decode and refuse on their merits, not a stranger's, which it drops unread.
    package func seal(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Int? {
        guard configuration.mode == .datagram, let key else { return length }
        return key.seal(buffer, length: length, from: .client)
    }

    /// Takes in one packet already decoded (by a WebSocket codec, or a test).
    package mutating func receive(_ packet: Packet, now: NIODeadline) -> Actions {
        var actions = Actions()
        receive(packet, now: now, into: &actions)
        return actions
    }

    /// Takes in one decoded packet, appending to `actions`; as the form that returns ``Actions``.
    package mutating func receive(_ packet: Packet, now: NIODeadline, into actions: inout Actions) {
        switch state {
        case .handshaking, .seated, .resuming:
            break
        case .idle, .suspended, .closed:
            // No socket is meant to be live: a late datagram of a socket the shell has not yet torn down.
            counters.packetsIgnored &+= 1
            return
        }
        guard packet.message.type.direction.allows(.server) else {
            counters.packetsIgnored &+= 1
            return
        }
        counters.packetsReceived &+= 1
        switch packet.message {
        case .challenge(let challenge):
            switch state {
            case .handshaking, .resuming: break
            case .idle, .seated, .suspended, .closed: return
            }
            challenges += 1
            guard challenges <= configuration.maxChallenges else { return finish(.handshakeLoop, into: &actions) }
            hello.cookie = challenge.cookie
            // The first Challenge is answered at once; a later one in the same handshake rides on the next resend
            // (``Configuration/helloInterval`` after the last Hello), so a server that answers every Hello with a new
            // Challenge gets at most one Hello per interval instead of one per round trip.
            if challenges == 1 { sendHello(now: now, into: &actions) }
        case .reject(let reject):
            finish(.rejected(reject.reason), into: &actions)
        case .disconnect(let disconnect):
            finish(.remote(disconnect.reason), into: &actions)
        default:
            // Taken out of `self` first, so the array is uniquely owned and `removeAll` keeps its storage.
            var delivered = inbox
            inbox = []
            delivered.removeAll(keepingCapacity: true)
            _ = endpoint.receive(packet, now: now) { delivered.append($0) }
            for message in delivered {
                if case .closed = state { break }
                deliver(message, now: now, into: &actions)
            }
            inbox = delivered
            // An ack owed now goes now, not at the next tick: the server's resend timer is running.
            if endpoint.owesAck, case .seated = state { runTimers(now: now, into: &actions) }
        }
    }

    private mutating func deliver(_ message: Message, now: NIODeadline, into actions: inout Actions) {
        switch message {
        case .welcome(let welcome):
            self.welcome = welcome
            // The session's key, once (a resume's Welcome carries the same one); a Welcome fed in decoded (a test)
            // sets it here, one from the bytes path already has.
            if configuration.mode == .datagram, key == nil, welcome.sessionKey != .zero { key = welcome.sessionKey }
            switch state {
            case .handshaking:
                state = .seated(welcome)
                stopHandshakeTimers()
                report(.seated(welcome), into: &actions)
            case .resuming:
                // The time away counts against neither the silence nor the ack timeout, and what the server could
                // not receive meanwhile is due at once.
                endpoint.reattached(now: now)
                state = .seated(welcome)
                stopHandshakeTimers()
                report(.resumed(welcome), into: &actions)
                flushAway(now: now, into: &actions)
            case .seated:
                // A second Welcome that is not a resend (those the endpoint drops as duplicates): keep its token,
                // but the seat was already announced.
                state = .seated(welcome)
            case .idle, .suspended, .closed:
                break
            }
        case .ping(let ping):
            guard case .seated = state else { return }
            do throws(EndpointError) {
                emit(try endpoint.stamp(.pong(ping), now: now), into: &actions)
            } catch {
                finish(.unacknowledged, into: &actions) // unreachable: a Pong is unreliable and never queued
            }
        case .pong(let pong):
            let rtt = now.seconds - pong.sendTime
            if rtt >= 0, rtt < 60 { report(.rtt(TimeAmount(seconds: rtt)), into: &actions) }
        default:
            // While a resume's handshake is in flight, the server resends what the old connection missed: those
            // messages carry the seat's reliable numbers from before the Welcome, and dropping them would lose a
            // goal or a card for good.
            switch state {
            case .seated, .resuming: report(.message(message), into: &actions)
            case .idle, .handshaking, .suspended, .closed: break
            }
        }
    }

    private mutating func flushAway(now: NIODeadline, into actions: inout Actions) {
        guard !away.isEmpty else { return }
        var held = away
        away = []
        for message in held {
            guard case .seated = state else { break }
            send(message, now: now, into: &actions)
        }
        held.removeAll(keepingCapacity: true)
        away = held
    }

    // MARK: Handing events over

    /// Removes and returns the next event of `actions` that is still current, or `nil` when none is left.
    ///
    /// Handing events over one at a time matters because handling one may end the connection: a resumed stream's
    /// `PuckMatchOver` ends the match, and the owner closes. What the same packet released after it then belongs to
    /// no connection any more; this skips it (counted in ``Stats/staleEventsDropped``) instead of handing a finished
    /// match a message, or a Welcome, it no longer expects. A shell that never closes from an event handler may just
    /// iterate ``Actions/events``.
    package mutating func nextEvent(from actions: inout Actions) -> Event? {
        while actions.cursor < actions.events.count {
            let index = actions.cursor
            actions.cursor += 1
            // An event appended to `events` by someone other than the connection has no epoch: it is current.
            if index >= actions.epochs.count || actions.epochs[index] == epoch { return actions.events[index] }
            counters.staleEventsDropped &+= 1
        }
        return nil
    }

    // MARK: Timers

    /// Runs what is due: Hello resends and the handshake timeout; once seated, the endpoint's resends, acks and
    /// keepalive Pings, and its silence and ack timeouts.
    package mutating func tick(now: NIODeadline) -> Actions {
        var actions = Actions()
        tick(now: now, into: &actions)
        return actions
    }

    /// Runs what is due, appending to `actions`; see ``tick(now:)``.
    package mutating func tick(now: NIODeadline, into actions: inout Actions) {
        runTimers(now: now, into: &actions)
    }

    private mutating func runTimers(now: NIODeadline, into actions: inout Actions) {
        switch state {
        case .handshaking, .resuming:
            if now >= handshakeDeadline { return finish(.handshakeTimeout, into: &actions) }
            if now >= nextHello { sendHello(now: now, into: &actions) }
        case .seated:
            let before = actions.packets.count
            let status = endpoint.poll(now: now) { actions.packets.append($0) }
            counters.packetsSent &+= UInt64(actions.packets.count - before)
            switch status {
            case .alive: break
            case .timedOut(.silence): finish(.silence, into: &actions)
            case .timedOut(.unacknowledged): finish(.unacknowledged, into: &actions)
            }
        case .idle, .suspended, .closed:
            break
        }
    }

    /// `name` as the wire takes it: no NUL bytes, at most ``WireLimits/maxName`` UTF-8 bytes, cut between characters.
    static func wireName(_ name: String) -> String {
        var result = name.filter { $0 != "\0" }
        while result.utf8.count > WireLimits.maxName { result.removeLast() }
        return result
    }
}
