import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishWire

/// The whole reference server as one loop-confined state machine: bytes and ticks in, packets out.
///
/// It knows nothing of sockets. The IO layer hands it each datagram or stream packet with the time, runs ``tick(now:)``
/// at 60 Hz, and writes what it leaves in ``outbox``. Everything is bounded by ``ServerConfiguration``: sessions,
/// matches, forming matches, rate-limited addresses, reliable queues and resume backlogs.
package struct ServerCore: Sendable {
    package let configuration: ServerConfiguration
    package private(set) var stats = ServerStats()
    /// Packets to write, in order; the IO layer drains it after every call.
    package var outbox: [Outgoing] = []

    private var cookies: CookieJar
    private var limits: SourceLimits
    private var matchmaker: Matchmaker
    private var peers: [UInt32: Peer] = [:]
    private var byConnection: [ConnectionID: UInt32] = [:]
    private var byToken: [UInt64: UInt32] = [:]
    private var matches: [UInt32: Match] = [:]
    private var seating: [UInt32: [UInt32?]] = [:]
    private var random: SeededRandom
    /// Resume tokens and session keys come from here, never from ``random``: the run's seed is public.
    private var secrets = SystemRandomNumberGenerator()
    private var nextPeer: UInt32 = 1
    private var lastHousekeeping: NIODeadline?
    private var delivered: [Message] = []
    private var scratchIDs: [UInt32] = []
    /// What the last call into a match's rules produced; emptied (keeping its storage) by ``flushMatch(_:now:)``.
    private var outputs = MatchOutputs()
    private var shuttingDown = false
    /// TCP and WebSocket connections without a seat yet, since when they opened.
    private var unseatedStreams: [ConnectionID: NIODeadline] = [:]
    /// Matches a player sent its view of the end to (a Suns tally) while the server still awaited its acknowledgement
    /// of a capture it had relayed to that player, or in which a capture reached the server after a tally: if the
    /// views then disagree, that capture was still in flight.
    private var unsettledMatches: Set<UInt32> = []
    /// Matches from which the server has received at least one Suns tally (a capture arriving after one is late).
    private var talliedMatches: Set<UInt32> = []
    /// Bytes per second of each running match, sampled once a second (``MatchTraffic``).
    package private(set) var traffic: MatchTraffic

    package init(configuration: ServerConfiguration, cookies: CookieJar = CookieJar()) {
        self.configuration = configuration
        self.cookies = cookies
        limits = SourceLimits(configuration)
        matchmaker = Matchmaker(
            .init(
                maxForming: configuration.maxForming,
                waitTimeout: UInt64(configuration.matchmakingTimeout.nanoseconds), games: configuration.games.games))
        random = SeededRandom(seed: configuration.seed)
        traffic = MatchTraffic(games: configuration.games.games.map(\.kind))
    }

    // MARK: Input

    /// A UDP datagram (or any undecoded packet) from `connection`.
    ///
    /// A datagram from an address that holds a session must carry that session's trailer (``SessionKey``), except a
    /// `Hello` (a resend racing the Welcome, ignored): one that does not verify is counted as `bad_mac` and dropped
    /// before anything in it is read, so a forged `Disconnect` or far-future number from that address changes nothing.
    package mutating func receive(_ bytes: UnsafeRawBufferPointer, from connection: ConnectionID, now: NIODeadline) {
        stats.bytesReceived &+= UInt64(bytes.count)
        // The trailer is checked before the limits are charged: a packet that proves its session is counted in the
        // session's own budgets, so a spoofer forging the player's address cannot use them up (`admitPacket`).
        guard bytes.count <= WireLimits.maxDatagram + SessionKey.trailerSize else {
            guard admit(connection, proof: .none, now: now) else { return }
            return stats.reject(.tooLarge)
        }
        let session = byConnection[connection]
        let isHello = (try? PacketHeader.peek(bytes))?.type == .hello
        // A Hello from a new address is read before it is charged: what its cookie proves decides the budget.
        if session == nil, isHello { return receiveHello(bytes, from: connection, now: now) }
        var body = bytes
        var verified = false
        if let session, let slot = peers.index(forKey: session), let key = peek(slot, { $0.key }), !isHello {
            guard let opened = key.open(bytes, from: .client) else {
                guard admit(connection, proof: .none, now: now) else { return }
                return stats.reject(.badMAC)
            }
            body = opened
            verified = true
        }
        guard admit(connection, proof: verified ? .verified : .none, now: now) else { return }
        guard body.count <= WireLimits.maxDatagram else { return stats.reject(.tooLarge) }
        let packet: Packet
        do throws(DecodeError) {
            packet = try Packet.decode(body, maxSize: WireLimits.maxDatagram)
        } catch .trailingBytes where session == nil && bytes.count > SessionKey.trailerSize {
            // Sealed, from an address without a session, and not a Hello: a session's that moved on or ended.
            let stripped = UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - SessionKey.trailerSize)])
            return stats.reject(
                (try? Packet.decode(stripped, maxSize: WireLimits.maxDatagram)) == nil ? .trailingBytes : .unknownPeer)
        } catch {
            stats.reject(Rejection(error))
            return
        }
        handle(packet, size: bytes.count, from: connection, session: session, proof: nil, now: now)
    }

    /// A datagram whose header says `Hello`, from an address that holds no session.
    ///
    /// It is decoded before it is charged, because its cookie decides which budget pays (``SourceLimits/Proof``): a
    /// valid cookie proved the address, so the Hello is counted with verified traffic, where a spoofer flooding that
    /// host cannot crowd it out; a zero cookie asks only for a `Challenge` and is counted against its sender alone;
    /// anything else (a stale or foreign cookie, bytes that do not decode) is unverified. A resume's Hello may carry a
    /// trailer under the session key it wants back: proof of the key.
    private mutating func receiveHello(_ bytes: UnsafeRawBufferPointer, from connection: ConnectionID, now: NIODeadline)
    {
        var hello: Packet?
        var sealedProof: UnsafeRawBufferPointer?
        var failure: Rejection?
        if bytes.count > WireLimits.maxDatagram {
            failure = .tooLarge
        } else {
            do throws(DecodeError) {
                hello = try Packet.decode(bytes, maxSize: WireLimits.maxDatagram)
            } catch .trailingBytes where bytes.count > SessionKey.trailerSize {
                let stripped = UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - SessionKey.trailerSize)])
                hello = try? Packet.decode(stripped, maxSize: WireLimits.maxDatagram)
                if hello == nil { failure = .trailingBytes } else { sealedProof = bytes }
            } catch {
                failure = Rejection(error)
            }
        }
        guard admit(connection, proof: proof(of: hello, from: connection, now: now), now: now) else { return }
        guard let hello else { return stats.reject(failure ?? .badValue) }
        handle(hello, size: bytes.count, from: connection, session: nil, proof: sealedProof, now: now)
    }

    /// What a decoded Hello from `connection` proves about its address.
    private func proof(of packet: Packet?, from connection: ConnectionID, now: NIODeadline) -> SourceLimits.Proof {
        guard case .hello(let hello)? = packet?.message else { return .none }
        guard case .datagram(let address) = connection else { return .verified }
        if hello.cookie == .zero { return .cookieRequest }
        return cookies.isValid(hello.cookie, for: Self.cookieKey(address), now: now.uptimeNanoseconds)
            ? .verified : .none
    }

    /// A packet a stream transport (TCP or WebSocket) already framed and decoded.
    ///
    /// Its bytes were counted as they were read (``read(bytes:)``); a match's bandwidth is sampled only when all its
    /// players are on UDP, so the packet adds no size to it.
    package mutating func receive(_ packet: Packet, from connection: ConnectionID, now: NIODeadline) {
        guard admit(connection, proof: .verified, now: now) else { return }
        handle(packet, size: 0, from: connection, session: byConnection[connection], proof: nil, now: now)
    }

    /// A stream transport could not decode or frame what it read.
    package mutating func streamError(_ rejection: Rejection) { stats.reject(rejection) }

    /// A TCP or WebSocket connection from `address` was accepted: its packets count against that host's limits.
    package mutating func streamOpened(_ connection: ConnectionID, from address: DatagramAddress?, now: NIODeadline) {
        limits.streamOpened(connection, from: address)
        unseatedStreams[connection] = now
    }

    /// How long a TCP or WebSocket connection may stay open without a seat: a handshake takes one round trip, so a
    /// connection that has none by then is holding a place under the connection caps, not playing.
    package static let streamHandshakeLimit = TimeAmount.seconds(10)

    /// How long after a match ends a game message of one of its players counts as `stale` (it was in flight: the
    /// player had not yet heard the match was over) rather than `out_of_state`: a round trip on any link a test
    /// emulates, with room for the client's next send.
    package static let lateInputGrace = TimeAmount.seconds(1)

    /// How long after the last capture it knows of a Suns client sends its tally (`SunsGame.tallyDelay`).
    static let sunsTallyDelay = TimeAmount.nanoseconds(Int64(SunsGame.tallyDelay * 1e9))

    /// Forgets match `id` (its seating is the caller's): the match itself, its prefix's count, and its Suns
    /// tally bookkeeping.
    private mutating func endMatch(_ id: UInt32) {
        matches[id] = nil
        limits.matchClosed(id)
        unsettledMatches.remove(id)
        talliedMatches.remove(id)
    }

    /// Whether a game message from the player in `slot`, whose match is gone, was in flight when the match ended:
    /// the player has not yet acknowledged what the server sent it (the match's end among it), or the end is younger
    /// than a round trip could explain. Such a message is late, as a reordered one is, and counted `stale`; after
    /// that, one is `out_of_state` (GameRules.md).
    private mutating func wasInFlight(_ slot: Dictionary<UInt32, Peer>.Index, now: NIODeadline) -> Bool {
        let (ended, unacknowledged) = peek(slot) { ($0.matchEndedAt, $0.endpoint.pendingCount > 0) }
        return ended.map { unacknowledged || now - $0 <= Self.lateInputGrace } ?? false
    }

    /// A TCP or WebSocket connection ended.
    package mutating func streamClosed(_ connection: ConnectionID, now: NIODeadline) {
        limits.streamClosed(connection)
        unseatedStreams[connection] = nil
        guard let id = byConnection[connection] else { return }
        drop(id, now: now)
    }

    /// Counts a connection the IO layer refused or closed (caps, timeouts, refused WebSocket frames).
    package mutating func connectionRefused(_ reason: Rejection) { stats.reject(reason) }

    private mutating func admit(_ connection: ConnectionID, proof: SourceLimits.Proof, now: NIODeadline) -> Bool {
        guard let refusal = limits.admitPacket(from: connection, proof: proof, now: now.uptimeNanoseconds) else {
            return true
        }
        stats.reject(refusal)
        return false
    }

    /// `size` is the bytes it took on the wire; `session` is the peer `connection` belongs to, if any; `proof` the
    /// whole datagram of a Hello that carried a trailer.
    private mutating func handle(
        _ packet: Packet, size: Int, from connection: ConnectionID, session: UInt32?, proof: UnsafeRawBufferPointer?,
        now: NIODeadline
    ) {
        let type = packet.message.type
        stats.packetsReceived[type.index] &+= 1
        guard type.direction.allows(.client) else {
            stats.reject(.wrongDirection)
            return
        }
        guard let id = session else {
            guard case .hello(let hello) = packet.message else {
                stats.reject(.unknownPeer)
                return
            }
            handshake(hello, from: connection, proof: proof, now: now)
            return
        }
        // A Hello resent before our Welcome arrived: ignored; the Welcome is resent by its own retransmission timer.
        if case .hello = packet.message { return }
        guard let slot = peers.index(forKey: id) else { return }
        traffic.received(size, match: peek(slot) { $0.match })
        // Taken out of `self` (not copied), so clearing it keeps its storage: no allocation per packet.
        var messages = delivered
        delivered = []
        messages.removeAll(keepingCapacity: true)
        // A Suns player's Ack that settles the last capture relayed to it: when, for the tally that may follow.
        let awaitedCapture =
            packet.message.type == .ack && peers.values[slot].game == .suns
            && peers.values[slot].endpoint.awaitsAcknowledgement(of: .sunsCapture)
        switch peers.values[slot].endpoint.receive(packet, now: now, deliver: { messages.append($0) }) {
        case .delivered, .buffered, .acknowledged: break
        case .stale: stats.reject(.stale)
        case .duplicate: stats.reject(.duplicate)
        case .farFuture: stats.reject(.farFuture)
        case .unsentAck: stats.reject(.unsentAck)
        }
        // Here, before the messages are delivered: delivering them may end the session and move the dictionary.
        if awaitedCapture, !peers.values[slot].endpoint.awaitsAcknowledgement(of: .sunsCapture) {
            peers.values[slot].captureAcknowledgedAt = now
        }
        // Played: it sent something of the game, not only the Ack and Pings every client sends after its Welcome.
        if !peers.values[slot].played, messages.contains(where: { $0.type != .ping && $0.type != .pong }) {
            peers.values[slot].played = true
        }
        for message in messages { deliver(message, from: id, now: now) }
        delivered = messages
    }

    // MARK: Handshake

    private mutating func handshake(
        _ hello: Hello, from connection: ConnectionID, proof: UnsafeRawBufferPointer?, now: NIODeadline
    ) {
        guard !shuttingDown else { return reject(.shuttingDown, "server is shutting down", to: connection) }
        guard hello.version == Hello.currentVersion else {
            stats.reject(.unsupportedVersion)
            return reject(.unsupportedVersion, "this server speaks protocol version 1", to: connection)
        }
        if case .datagram(let address) = connection {
            let key = Self.cookieKey(address)
            guard hello.cookie != .zero, cookies.isValid(hello.cookie, for: key, now: now.uptimeNanoseconds) else {
                if hello.cookie != .zero { stats.reject(.badCookie) }
                stats.challengesSent &+= 1
                let challenge = Challenge(cookie: cookies.cookie(for: key, now: now.uptimeNanoseconds))
                return send(control: .challenge(challenge), to: connection)
            }
        }
        guard PlayerName.isAcceptable(hello.name) else {
            stats.reject(.badName)
            return reject(.badName, "names may not hold control or bidi-override characters", to: connection)
        }
        // Counted once the address is proven (a valid cookie, or a stream's accepted connection): a spoofed flood
        // of Hellos costs an honest host nothing.
        if let refusal = limits.admitHandshake(from: connection, now: now.uptimeNanoseconds) {
            stats.reject(refusal)
            return reject(.rateLimited, "too many handshakes from your network; try again in a second", to: connection)
        }
        if hello.resumeToken != 0 { return resume(hello, from: connection, proof: proof, now: now) }
        guard peers.count < configuration.maxSessions else {
            stats.reject(.serverFull)
            return reject(.serverFull, "server holds its maximum number of sessions", to: connection)
        }
        if let refusal = limits.admitSession(from: connection) {
            stats.reject(refusal)
            return reject(.serverFull, "your host or network holds its maximum number of sessions", to: connection)
        }
        guard let game = configuration.games[hello.game] else {
            stats.reject(.unknownGame)
            return reject(.badRequest, configuration.games.refusal(for: hello.game), to: connection)
        }
        let table = Matchmaker.Table(game: hello.game, seats: Int(hello.seats))
        guard game.seats.contains(table.seats) else {
            stats.reject(.badRequest)
            let seats =
                game.seats.count == 1 ? "\(game.seats.lowerBound)" : "\(game.seats.lowerBound)-\(game.seats.upperBound)"
            return reject(.badRequest, "\(game.name) takes \(seats) seats, not \(hello.seats)", to: connection)
        }
        if hello.match == 0, matches.count >= configuration.maxMatches {
            stats.reject(.serverFull)
            return reject(.serverFull, "server runs its maximum number of matches", to: connection)
        }
        if hello.match == 0, matchmaker.opensMatch(at: table), let refusal = limits.admitMatch(from: connection) {
            stats.reject(refusal)
            return reject(.serverFull, "your network holds its share of this server's matches", to: connection)
        }
        let id = nextPeerID()
        let seated: Matchmaker.Seating
        switch matchmaker.seat(peer: id, at: table, requested: hello.match, now: now.uptimeNanoseconds) {
        case .success(let seating): seated = seating
        case .failure(let reason):
            stats.reject(Rejection(reason))
            return reject(reason, reason.description, to: connection)
        }
        let token = newToken()
        let key: SessionKey? = connection.isDatagram ? SessionKey.random() : nil
        let mode: ReliableEndpoint.Mode = connection.isDatagram ? .datagram : .stream
        var reliability = configuration.reliability
        reliability.mode = mode
        let peer = Peer(
            id: id, connection: connection, endpoint: ReliableEndpoint(configuration: reliability, now: now),
            game: hello.game, match: seated.match, seat: seated.seat, resumeToken: token, key: key, name: hello.name)
        peers[id] = peer
        byConnection[connection] = id
        unseatedStreams[connection] = nil
        byToken[token] = id
        limits.sessionOpened(id, from: connection)
        stats.sessionsOpened &+= 1
        send(
            .welcome(
                Welcome(
                    peer: id, match: seated.match, seat: UInt8(seated.seat), tickRate: UInt16(game.tickRate),
                    resumeToken: token, sessionKey: key ?? .zero)),
            to: id, now: now)
        if seated.isNew {
            seating[seated.match] = Array(repeating: nil, count: table.seats)
            matches[seated.match] = newMatch(table, id: seated.match)
            limits.matchOpened(seated.match, from: connection)
        }
        seating[seated.match]?[seated.seat] = id
        matches[seated.match]?.seatFilled(seated.seat, peer: id, now: now, into: &outputs)
        flushMatch(seated.match, now: now)
        refreshGauges()
    }

    /// Gives a dropped player its seat back on a new connection, under the rules of the spec's "Resuming".
    ///
    /// The token is bound to its session: the same game and the same kind of transport (a UDP seat's key means
    /// nothing on a stream). It is single-use: the Welcome that answers carries a new token and the old one is
    /// forgotten. A seat whose owner is still attached is not handed to a token alone — the token may have leaked;
    /// only a UDP resume whose Hello carries a trailer under the session key (which only the owner holds) takes it
    /// over, and then the old address is told with `Disconnect(resumedElsewhere)`. Otherwise: `Reject(seatInUse)`.
    private mutating func resume(
        _ hello: Hello, from connection: ConnectionID, proof: UnsafeRawBufferPointer?, now: NIODeadline
    ) {
        // A session whose match ended while it was away (match 0) resumes too: the outcome it missed (PuckMatchOver,
        // SnapGameOver) is still unacknowledged in its stream and reaches it now, as a player coming back to a finished
        // game expects to see the result rather than an error.
        guard let id = byToken[hello.resumeToken], var peer = peers[id], peer.game == hello.game,
            peer.connection.isDatagram == connection.isDatagram, peer.match == 0 || matches[peer.match] != nil
        else {
            stats.reject(.resumeExpired)
            return reject(.resumeExpired, "no seat is held for this resume token", to: connection)
        }
        if peer.isAttached {
            guard let proof, let key = peer.key, key.open(proof, from: .client) != nil else {
                stats.reject(.seatInUse)
                return reject(.seatInUse, "this seat's player is still connected", to: connection)
            }
            send(
                control: .disconnect(Disconnect(reason: .resumedElsewhere)), to: peer.connection, key: peer.key,
                close: true)
            byConnection[peer.connection] = nil
        }
        byToken[peer.resumeToken] = nil
        peer.resumeToken = newToken()
        byToken[peer.resumeToken] = id
        byConnection[connection] = id
        unseatedStreams[connection] = nil
        peer.connection = connection
        if peer.detachedAt != nil { stats.detached -= 1 }
        peer.detachedAt = nil
        let backlog = peer.backlog
        peer.backlog = []
        // What the old connection never acknowledged goes to the new one with the next tick, not after a backoff.
        peer.endpoint.reattached(now: now)
        peers[id] = peer
        stats.resumes &+= 1
        send(
            .welcome(
                Welcome(
                    peer: id, match: peer.match, seat: UInt8(peer.seat),
                    tickRate: UInt16(configuration.games[peer.game]?.tickRate ?? PuckConstants.tickRate),
                    resumeToken: peer.resumeToken, sessionKey: peer.key ?? .zero)),
            to: id, now: now)
        for message in backlog { send(message, to: id, now: now) }
        matches[peer.match]?.seatAttached(peer.seat, now: now)
        refreshGauges()
    }

    /// The rules of a new match, from the registry (the handshake checked that it holds the game).
    private func newMatch(_ table: Matchmaker.Table, id: UInt32) -> Match? {
        var seed = SeededRandom(seed: configuration.seed).derived(UInt64(id))
        let setup = MatchSetup(
            match: id, seats: table.seats, seed: seed.next(),
            resumeWindow: .nanoseconds(configuration.resumeWindow.nanoseconds),
            snapTurnLimit: configuration.snapTurnLimit, shots: configuration.shotMachine)
        return configuration.games.makeRules(table.game, setup).map(Match.init)
    }

    /// A resume token no session holds, from the system's CSPRNG.
    private mutating func newToken() -> UInt64 {
        var token: UInt64 = 0
        while token == 0 || byToken[token] != nil { token = secrets.next() }
        return token
    }

    private mutating func nextPeerID() -> UInt32 {
        repeat {
            nextPeer &+= 1
            if nextPeer == 0 { nextPeer = 1 }
        } while peers[nextPeer] != nil
        return nextPeer
    }

    // MARK: Messages from players

    private mutating func deliver(_ message: Message, from id: UInt32, now: NIODeadline) {
        guard let slot = peers.index(forKey: id) else { return }
        let peer = peek(slot) { (match: $0.match, seat: $0.seat) }
        switch message {
        case .ping(let ping):
            send(.pong(ping), to: id, now: now)
        case .pong:
            break
        case .disconnect:
            leave(id, now: now)
        case .clientQuit:
            // Reliable, unlike Disconnect: acknowledged before the session is forgotten, or the client would resend
            // it into a session that no longer exists until its ack timeout.
            acknowledgeNow(slot)
            leave(id, now: now)
        case .chat(let chat):
            guard let seats = seating[peer.match] else {
                return stats.reject(wasInFlight(slot, now: now) ? .stale : .outOfState)
            }
            for case let other? in seats where other != id { send(.chat(chat), to: other, now: now) }
        default:
            guard let index = matches.index(forKey: peer.match) else {
                // A player plays until it hears the match is over: what it sent meanwhile is late, not wrong.
                return stats.reject(wasInFlight(slot, now: now) ? .stale : .outOfState)
            }
            switch message {
            case .sunsTally:
                // The sender may not have heard every capture yet: one relayed to it is still unacknowledged, or was
                // acknowledged less than the tally delay ago. An up-to-date tally leaves at least that long after the
                // last capture its sender heard of (GameRules.md), so one that comes sooner may have been sent before
                // that capture arrived, and been resent after losses while the capture's Ack overtook it.
                let (awaited, acknowledged) = peek(slot) {
                    ($0.endpoint.awaitsAcknowledgement(of: .sunsCapture), $0.captureAcknowledgedAt)
                }
                if awaited || acknowledged.map({ now - $0 < Self.sunsTallyDelay }) ?? false {
                    unsettledMatches.insert(peer.match)
                }
                talliedMatches.insert(peer.match)
            case .sunsCapture where talliedMatches.contains(peer.match):
                // A capture still on its way to the server (resends under loss) when a tally left: that tally
                // cannot hold it.
                unsettledMatches.insert(peer.match)
            default:
                break
            }
            let verdict = matches.values[index].receive(message, from: peer.seat, now: now, into: &outputs)
            switch verdict {
            case .accepted: break
            case .outOfState: stats.reject(.outOfState)
            case .outOfTurn: stats.reject(.outOfTurn)
            case .badValue: stats.reject(.badValue)
            }
            flushMatch(peer.match, now: now)
        }
    }

    /// Sends the Ack a peer is owed now, rather than with the next tick (over UDP; a stream owes none).
    private mutating func acknowledgeNow(_ slot: Dictionary<UInt32, Peer>.Index) {
        guard peek(slot, { $0.endpoint.owesAck }) else { return }
        let (connection, match, key) = peek(slot) { ($0.connection, $0.match, $0.key) }
        let ack = peek(slot) { $0.endpoint.currentAck }
        write(Outgoing(connection, Packet(number: 0, .ack(ack)), match: match, key: key))
    }

    // MARK: Time

    /// One 60 Hz server tick: matches step, reliability timers run, and once a second the housekeeping.
    package mutating func tick(now: NIODeadline) {
        stats.ticks &+= 1
        // The IDs are copied out first: mutating `matches` or `peers` while iterating their keys would copy the whole
        // dictionary on every tick.
        var ids = scratchIDs
        scratchIDs = []
        ids.removeAll(keepingCapacity: true)
        ids.append(contentsOf: matches.keys)
        for id in ids {
            guard let index = matches.index(forKey: id) else { continue }
            matches.values[index].tick(stats.ticks, now: now, into: &outputs)
            if !outputs.isEmpty { flushMatch(id, now: now) }
        }
        ids.removeAll(keepingCapacity: true)
        var slot = peers.startIndex
        while slot != peers.endIndex {
            if peek(slot, { $0.isAttached && now >= $0.endpoint.nextDeadline }) { ids.append(peers.keys[slot]) }
            peers.formIndex(after: &slot)
        }
        var timedOut: [UInt32] = []
        for id in ids {
            guard let slot = peers.index(forKey: id) else { continue }
            let (connection, match, key) = peek(slot) { ($0.connection, $0.match, $0.key) }
            var emitted: [Packet] = []
            let status = peers.values[slot].endpoint.poll(now: now) { emitted.append($0) }
            for packet in emitted { write(Outgoing(connection, packet, match: match, key: key)) }
            if case .timedOut = status { timedOut.append(id) }
        }
        scratchIDs = ids
        stats.sessionsTimedOut &+= UInt64(timedOut.count)
        for id in timedOut { drop(id, now: now) }
        if lastHousekeeping.map({ now - $0 >= .seconds(1) }) ?? true {
            lastHousekeeping = now
            housekeeping(now: now)
            let matches = self.matches
            traffic.sample(now: now) { matches[$0] != nil }
        }
    }

    private mutating func housekeeping(now: NIODeadline) {
        // Streams that never took a seat: closed (and counted) once the handshake limit passes.
        for (connection, since) in unseatedStreams where now - since >= Self.streamHandshakeLimit {
            unseatedStreams[connection] = nil
            stats.reject(.handshakeTimeout)
            send(control: .disconnect(Disconnect(reason: .protocolError)), to: connection, close: true)
        }
        for expired in matchmaker.expire(now: now.uptimeNanoseconds) {
            for id in expired.peers {
                guard let peer = peers[id] else { continue }
                let text =
                    "no other player joined within \(Int(configuration.matchmakingTimeout.seconds)) s"
                send(
                    control: .reject(Reject(reason: .matchmakingTimeout, text: text)), to: peer.connection,
                    key: peer.key, close: true)
                forget(id)
            }
            if let game = gameOf(expired.match) { stats.games[game, default: .init()].abandoned &+= 1 }
            endMatch(expired.match)
            seating[expired.match] = nil
        }
        let window = configuration.resumeWindow
        if stats.detached > 0 {
            let stale = peers.values.filter { peer in peer.detachedAt.map { now - $0 >= window } ?? false }.map(\.id)
            for id in stale { leave(id, now: now) }
        }
        refreshGauges()
    }

    // MARK: Leaving

    /// The connection is gone (silence, no acks, a closed stream): hold the seat for a resume when the match is on
    /// and the player ever played — a session that sent nothing after its Welcome frees its seat at once.
    private mutating func drop(_ id: UInt32, now: NIODeadline) {
        guard var peer = peers[id], peer.isAttached else { return }
        byConnection[peer.connection] = nil
        guard peer.played, let match = matches[peer.match], !match.isOver, seating[peer.match]?.contains(nil) == false
        else {
            return leave(id, now: now)
        }
        peer.detachedAt = now
        stats.detached += 1
        peers[id] = peer
        matches[peer.match]?.seatDetached(peer.seat, now: now)
        refreshGauges()
    }

    /// The player is gone for good: its match hears of it and its session is forgotten.
    private mutating func leave(_ id: UInt32, now: NIODeadline) {
        guard let peer = peers[id] else { return }
        if seating[peer.match]?.contains(nil) == true {
            matchmaker.leave(peer: id, match: peer.match)
            seating[peer.match]?[peer.seat] = nil
            if seating[peer.match]?.allSatisfy({ $0 == nil }) == true {
                seating[peer.match] = nil
                endMatch(peer.match)
            }
        } else if matches[peer.match] != nil {
            matches[peer.match]?.seatLeft(peer.seat, now: now, into: &outputs)
            seating[peer.match]?[peer.seat] = nil
        }
        let match = peer.match
        forget(id)
        flushMatch(match, now: now)
        refreshGauges()
    }

    private mutating func forget(_ id: UInt32) {
        guard let peer = peers.removeValue(forKey: id) else { return }
        if peer.isAttached, byConnection[peer.connection] == id { byConnection[peer.connection] = nil }
        if !peer.isAttached { stats.detached -= 1 }
        byToken[peer.resumeToken] = nil
        limits.sessionClosed(id)
        stats.sessionsClosed &+= 1
    }

    /// Tells every player the server is going away; the IO layer closes the listeners after writing the outbox.
    package mutating func shutdown(now: NIODeadline) {
        shuttingDown = true
        for id in Array(peers.keys) {
            guard let peer = peers[id], peer.isAttached else { continue }
            send(.serverQuit, to: id, now: now)
            send(
                control: .disconnect(Disconnect(reason: .serverShutdown)), to: peer.connection, key: peer.key,
                close: true)
        }
    }

    // MARK: Output

    private mutating func flushMatch(_ match: UInt32, now: NIODeadline) {
        if !outputs.notices.isEmpty {
            for notice in outputs.notices { count(notice, match: match, now: now) }
            outputs.notices.removeAll(keepingCapacity: true)
        }
        guard !outputs.messages.isEmpty else { return }
        // Taken out of `self`, sent, then handed back empty with its storage: no allocation per flush.
        var messages = outputs.messages
        outputs.messages = []
        if let seats = seating[match] {
            for output in messages {
                guard output.seat >= 0, output.seat < seats.count, let id = seats[output.seat] else { continue }
                send(output.message, to: id, now: now)
            }
        }
        messages.removeAll(keepingCapacity: true)
        if outputs.messages.isEmpty { outputs.messages = messages }
        if let index = matches.index(forKey: match), isOver(index) {
            endMatch(match)
            for case let id? in seating[match] ?? [] {
                guard let slot = peers.index(forKey: id) else { continue }
                peers.values[slot].match = 0
                peers.values[slot].matchEndedAt = now
            }
            seating[match] = nil
        }
    }

    private mutating func count(_ notice: MatchNotice, match: UInt32, now: NIODeadline) {
        guard let game = gameOf(match) else { return }
        switch notice {
        case .started:
            stats.games[game, default: .init()].started &+= 1
            if playsOverDatagrams(match) { traffic.started(match, game: game, now: now) }
        case .completed: stats.games[game, default: .init()].completed &+= 1
        case .forfeited: stats.forfeits &+= 1
        case .compared(let agreed):
            stats.games[game, default: .init()].compared &+= 1
            // A view sent before its player heard everything (a capture relayed to it still unacknowledged) could
            // not agree yet: late delivery, counted apart, not a desync (GameRules.md, Suns).
            if !agreed {
                if unsettledMatches.contains(match) {
                    stats.games[game, default: .init()].unsettled &+= 1
                } else {
                    stats.games[game, default: .init()].desyncs &+= 1
                }
            }
        }
    }

    /// Whether every seated player of `match` is on UDP: only datagrams have sizes the core is told, so a match with
    /// a player on a stream would read as less traffic than it has, and its bandwidth is not sampled.
    private mutating func playsOverDatagrams(_ match: UInt32) -> Bool {
        for case let id? in seating[match] ?? [] {
            guard let slot = peers.index(forKey: id), peek(slot, { $0.connection.isDatagram }) else { return false }
        }
        return true
    }

    private func gameOf(_ match: UInt32) -> GameKind? { matches[match]?.game.kind }

    /// Sends through the peer's reliability endpoint, or keeps the message for a detached peer.
    private mutating func send(_ message: Message, to id: UInt32, now: NIODeadline) {
        // Mutated in place through `peers.values[slot]`: a copy of the peer would copy its endpoint's queues, and the
        // dictionary's key subscript moves a value this large through a heap-allocated coroutine frame.
        guard let slot = peers.index(forKey: id) else { return }
        guard peek(slot, { $0.isAttached }) else {
            guard message.type.delivery == .reliable else { return }
            guard peek(slot, { $0.backlog.count }) < configuration.detachedBacklog else {
                stats.reject(.queueFull)
                return leave(id, now: now)
            }
            peers.values[slot].backlog.append(message)
            return
        }
        let packet: Packet
        do throws(EndpointError) {
            packet = try peers.values[slot].endpoint.stamp(message, now: now)
        } catch {
            stats.reject(.queueFull)
            let (connection, key) = peek(slot) { ($0.connection, $0.key) }
            send(control: .disconnect(Disconnect(reason: .protocolError)), to: connection, key: key, close: true)
            return leave(id, now: now)
        }
        let (connection, match, key) = peek(slot) { ($0.connection, $0.match, $0.key) }
        write(Outgoing(connection, packet, match: match, key: key))
    }

    /// Whether a match is over, read in place (the getter of `matches.values` would copy the match).
    private mutating func isOver(_ index: Dictionary<UInt32, Match>.Index) -> Bool {
        func read(_ match: inout Match) -> Bool { match.isOver }
        return read(&matches.values[index])
    }

    /// Reads a peer in place. `peers.values[slot]` has only a getter (a copy of the whole peer, its endpoint's
    /// queues included) and a `_modify`; going through the latter borrows the peer instead.
    private mutating func peek<T>(_ slot: Dictionary<UInt32, Peer>.Index, _ read: (inout Peer) -> T) -> T {
        read(&peers.values[slot])
    }

    private mutating func reject(_ reason: RejectReason, _ text: String, to connection: ConnectionID) {
        send(control: .reject(Reject(reason: reason, text: text)), to: connection, close: !connection.isDatagram)
    }

    /// Sends a handshake or control packet; `key` is the session's when `connection` holds one (its trailer).
    private mutating func send(
        control message: Message, to connection: ConnectionID, key: SessionKey? = nil, close: Bool = false
    ) {
        write(Outgoing(connection, Packet(number: 0, message), closeAfter: close, key: key))
    }

    private mutating func write(_ outgoing: Outgoing) {
        stats.packetsSent[outgoing.packet.message.type.index] &+= 1
        outbox.append(outgoing)
    }

    /// The IO layer fell behind the 60 Hz schedule and re-anchored it.
    package mutating func noteLateTick() { stats.lateTicks &+= 1 }

    /// The IO layer (re)started its 60 Hz schedule with tick 0 due at `anchor`.
    package mutating func noteTickAnchor(_ anchor: NIODeadline) { stats.tickAnchor = anchor.uptimeNanoseconds }

    /// Counts bytes the IO layer wrote.
    package mutating func wrote(bytes: Int) { stats.bytesSent &+= UInt64(bytes) }

    /// Counts bytes the IO layer read from a TCP connection or an upgraded WebSocket (framing included); an HTTP
    /// request (a `/metrics` scrape, the upgrade itself) is not game traffic and is never counted.
    package mutating func read(bytes: Int) { stats.bytesReceived &+= UInt64(bytes) }

    /// Counts bytes the IO layer wrote for an ``Outgoing`` of `match` (its ``Outgoing/match``) toward that match's
    /// bandwidth; 0 (a packet for no running match) counts nothing.
    package mutating func wrote(bytes: Int, match: UInt32) {
        if match != 0 { traffic.sent(bytes, match: match) }
    }

    private mutating func refreshGauges() {
        stats.sessions = peers.count
        stats.matches = matches.count
    }

    /// The bytes a cookie is bound to: the address and port (the handshake path only).
    private static func cookieKey(_ address: DatagramAddress) -> [UInt8] { address.bytes }
}

extension Rejection {
    init(_ reason: RejectReason) {
        switch reason {
        case .serverFull: self = .serverFull
        case .unsupportedVersion: self = .unsupportedVersion
        case .badCookie: self = .badCookie
        case .resumeExpired: self = .resumeExpired
        case .rateLimited: self = .rateLimited
        case .badName: self = .badName
        case .seatInUse: self = .seatInUse
        default: self = .badRequest
        }
    }
}
