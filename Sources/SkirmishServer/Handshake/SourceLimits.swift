import SkirmishNet

/// The server's limits per sender, per host and per prefix: packets and handshakes per second, sessions and matches
/// held.
///
/// Rates are kept in ``RateSketch``es of fixed size, so no flood of new (spoofed) sources can fill a table or evict
/// an honest sender's count; sessions are counted per host and prefix in tables that hold one entry per source that
/// holds a session, so they are bounded by the session limit. A stream connection counts against the host it was
/// accepted from (``streamOpened(_:from:)``); a session against the host that opened it, wherever it resumes.
package struct SourceLimits: Sendable {
    private enum Kind: UInt64 {
        case sender = 1
        case host, prefix
    }

    private let packetRate: Double
    private let limits: ServerConfiguration.HostLimits
    private var packets: RateSketch
    private var handshakes: RateSketch
    private var streamHosts: [UInt64: SourceHost] = [:]
    private var sessionHosts: [UInt32: SourceHost] = [:]
    private var sessionsByHost: [SourceHost: Int] = [:]
    private var sessionsByPrefix: [SourceHost: Int] = [:]
    /// Sessions and matches one prefix may hold: its ``ServerConfiguration/HostLimits/prefixShare`` of the server's.
    private let sessionsPerPrefix: Int?
    private let matchesPerPrefix: Int?
    /// The prefix whose player opened each match that counts against a share, and how many each prefix opened.
    private var matchPrefixes: [UInt32: SourceHost] = [:]
    private var matchesByPrefix: [SourceHost: Int] = [:]

    /// The sessions a prefix's share leaves it at least, when hosts have no limit of their own.
    static let shareFloor = 64

    /// Counters per row of the packet sketch: 2 × 4 × 32,768 × 4 bytes = 1 MiB.
    package static let packetSketchWidth = 1 << 15
    /// Counters per row of the handshake sketch (verified handshakes only, so far fewer keys): 128 KiB.
    package static let handshakeSketchWidth = 1 << 12

    package init(_ configuration: ServerConfiguration) {
        packetRate = configuration.packetRate
        limits = configuration.hostLimits
        packets = RateSketch(width: Self.packetSketchWidth)
        handshakes = RateSketch(width: Self.handshakeSketchWidth)
        // A share never leaves a prefix less than one host's room (its sessions, and a match for each two of them):
        // on a small server (`--max-matches 100`) 1/128 would be one match, and a LAN party or a household behind
        // one address could not play.
        let share = configuration.hostLimits.prefixShare
        let hostRoom = limits.sessionsPerHost ?? Self.shareFloor
        let sessionShare = share.map { max(hostRoom, Int(Double(configuration.maxSessions) * $0)) }
        sessionsPerPrefix = [limits.sessionsPerPrefix, sessionShare].compactMap { $0 }.min()
        matchesPerPrefix = share.map { max(max(1, hostRoom / 2), Int(Double(configuration.maxMatches) * $0)) }
    }

    // MARK: Streams

    package mutating func streamOpened(_ connection: ConnectionID, from address: DatagramAddress?) {
        guard case .stream(let id) = connection, let address else { return }
        streamHosts[id] = SourceHost(address)
    }

    package mutating func streamClosed(_ connection: ConnectionID) {
        guard case .stream(let id) = connection else { return }
        streamHosts[id] = nil
    }

    /// Stream connections whose host is known.
    package var trackedStreams: Int { streamHosts.count }

    // MARK: Rates

    /// What a packet proved about its sender, which decides the budgets it is counted in.
    package enum Proof: Sendable, Hashable {
        /// Nothing: counted in the unverified budgets of its sender, host and prefix, which a spoofer forging that
        /// address (or one of its host or prefix) can use up.
        case none
        /// A `Hello` without a cookie, from an address that holds no session: answered only with a `Challenge` (smaller
        /// than the padded Hello, and nothing kept), so it is counted against its sender alone. Counted in its host's
        /// unverified budget, it would be the one packet of an honest join that a spoofer flooding that host (or its
        /// prefix) from other ports could keep from ever being answered.
        case cookieRequest
        /// Its address or its session: a `Hello` carrying a valid cookie, a datagram whose trailer verified, or a
        /// packet on a stream. Counted in budgets of their own, which no spoofer can reach.
        case verified
    }

    /// Counts one packet from `connection` at `now` (nanoseconds) unless a limit refuses it: the reason, or `nil`.
    ///
    /// A packet is counted against its sender, host and prefix only when all three admit it, so a refused packet
    /// uses up nothing.
    ///
    /// `proof` says what the packet proved (``Proof``): verified and unverified packets are counted in budgets of
    /// their own, so a spoofer who forges a player's address (or its host, or its prefix) uses up only the unverified
    /// budget — never the player's own, nor what a new player of that host needs once it holds a cookie.
    package mutating func admitPacket(from connection: ConnectionID, proof: Proof, now: UInt64) -> Rejection? {
        let proofBits: UInt64 = proof == .verified ? 0 : 1 << 8
        let sender: UInt64
        switch connection {
        case .datagram(let address):
            sender = packets.hash(
                address.high, address.low,
                Kind.sender.rawValue << 56 | proofBits << 32 | UInt64(address.scope) << 24
                    | UInt64(address.version) << 16 | UInt64(address.port))
        case .stream(let id):
            sender = packets.hash(id, 0, Kind.sender.rawValue << 56 | 1 << 32)
        }
        guard packets.estimate(sender, now: now) + 1 <= packetRate else { return .rateLimited }
        guard proof != .cookieRequest, limits.packetsPerHost != nil || limits.packetsPerPrefix != nil,
            let host = host(of: connection)
        else {
            packets.record(sender)
            return nil
        }
        let hostKey = host.sketchHash(packets, kind: Kind.host.rawValue | proofBits)
        if let rate = limits.packetsPerHost, packets.estimate(hostKey, now: now) + 1 > rate { return .hostRateLimited }
        let prefixKey = prefix(of: host).sketchHash(packets, kind: Kind.prefix.rawValue | proofBits)
        if let rate = limits.packetsPerPrefix, packets.estimate(prefixKey, now: now) + 1 > rate {
            return .prefixRateLimited
        }
        packets.record(sender)
        if limits.packetsPerHost != nil { packets.record(hostKey) }
        if limits.packetsPerPrefix != nil { packets.record(prefixKey) }
        return nil
    }

    /// Counts one verified handshake from `connection` unless a limit refuses it: the reason, or `nil`.
    package mutating func admitHandshake(from connection: ConnectionID, now: UInt64) -> Rejection? {
        guard limits.handshakesPerHost != nil || limits.handshakesPerPrefix != nil, let host = host(of: connection)
        else { return nil }
        let hostKey = host.sketchHash(handshakes, kind: Kind.host.rawValue)
        let prefixKey = prefix(of: host).sketchHash(handshakes, kind: Kind.prefix.rawValue)
        if let rate = limits.handshakesPerHost, handshakes.estimate(hostKey, now: now) + 1 > rate {
            return .handshakeRateLimited
        }
        if let rate = limits.handshakesPerPrefix, handshakes.estimate(prefixKey, now: now) + 1 > rate {
            return .handshakeRateLimited
        }
        if limits.handshakesPerHost != nil { handshakes.record(hostKey) }
        if limits.handshakesPerPrefix != nil { handshakes.record(prefixKey) }
        return nil
    }

    // MARK: Sessions

    /// Whether `connection`'s host and prefix may open one more session: the reason it may not, or `nil`.
    package func admitSession(from connection: ConnectionID) -> Rejection? {
        guard let host = host(of: connection) else { return nil }
        if let most = limits.sessionsPerHost, sessionsByHost[host, default: 0] >= most { return .hostSessionsFull }
        if let most = sessionsPerPrefix, sessionsByPrefix[prefix(of: host), default: 0] >= most {
            return .prefixSessionsFull
        }
        return nil
    }

    package mutating func sessionOpened(_ id: UInt32, from connection: ConnectionID) {
        guard limits.sessionsPerHost != nil || sessionsPerPrefix != nil, let host = host(of: connection) else {
            return
        }
        sessionHosts[id] = host
        sessionsByHost[host, default: 0] += 1
        sessionsByPrefix[prefix(of: host), default: 0] += 1
    }

    package mutating func sessionClosed(_ id: UInt32) {
        guard let host = sessionHosts.removeValue(forKey: id) else { return }
        sessionsByHost.countDown(host)
        sessionsByPrefix.countDown(prefix(of: host))
    }

    /// Sessions held by `host`'s address.
    package func sessions(ofHost host: SourceHost) -> Int { sessionsByHost[host, default: 0] }

    // MARK: Matches

    /// Whether `connection`'s prefix may open one more match: ``Rejection/prefixMatchesFull`` once it holds its share.
    package func admitMatch(from connection: ConnectionID) -> Rejection? {
        guard let most = matchesPerPrefix, let host = host(of: connection) else { return nil }
        return matchesByPrefix[prefix(of: host), default: 0] >= most ? .prefixMatchesFull : nil
    }

    /// `match` was opened by a player on `connection`: it counts against that player's prefix until it closes.
    package mutating func matchOpened(_ match: UInt32, from connection: ConnectionID) {
        guard matchesPerPrefix != nil, let host = host(of: connection) else { return }
        let prefix = prefix(of: host)
        matchPrefixes[match] = prefix
        matchesByPrefix[prefix, default: 0] += 1
    }

    package mutating func matchClosed(_ match: UInt32) {
        guard let prefix = matchPrefixes.removeValue(forKey: match) else { return }
        matchesByPrefix.countDown(prefix)
    }

    // MARK: Keys

    private func host(of connection: ConnectionID) -> SourceHost? {
        switch connection {
        case .datagram(let address): SourceHost(address)
        case .stream(let id): streamHosts[id]
        }
    }

    private func prefix(of host: SourceHost) -> SourceHost {
        host.prefix(ipv4: limits.ipv4Prefix, ipv6: limits.ipv6Prefix)
    }

}
