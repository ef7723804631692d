import NIOCore
import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishServer

/// The count-min sketch behind every rate limit: never under-counts, and a flood of distinct keys barely moves an
/// honest one.
@Suite struct RateSketchTests {
    let second: UInt64 = 1_000_000_000

    @Test func itCountsAKeysEventsOverTheLastSecond() {
        var sketch = RateSketch(width: 1 << 10, key0: 1, key1: 2)
        let key = sketch.hash(7, 0, 0)
        let start = 10 * second
        let admitted = (0..<80).filter { _ in sketch.admit(key, limit: 50, now: start) }.count
        #expect(admitted == 50, "exact for a lone key; refused events are not counted")
        #expect(sketch.estimate(key, now: start) == 50)
        // Half a second into the next window, half of the previous window still counts.
        #expect(sketch.estimate(key, now: start + 3 * second / 2) == 25)
        let oneMore = sketch.admit(key, limit: 50, now: start + 3 * second / 2)
        #expect(oneMore)
        // After a silent two seconds nothing is left.
        #expect(sketch.estimate(key, now: start + 4 * second) == 0)
    }

    @Test func seventyThousandDistinctKeysAddAlmostNothingToAnHonestKey() {
        var sketch = RateSketch(width: SourceLimits.packetSketchWidth)
        let now = 10 * second
        var refused = 0
        for source in 0..<70_000 where !sketch.admit(sketch.hash(UInt64(source), 1, 0), limit: 400, now: now) {
            refused += 1
        }
        #expect(refused == 0, "each source sent one")
        let honest = sketch.estimate(sketch.hash(1 << 40, 2, 0), now: now)
        #expect(honest <= 4, "the flood's over-count on a fresh key is about 70,000 / 32,768 per counter, at most")
        #expect(sketch.memoryBytes == 1 << 20, "fixed, whatever the number of keys")
    }
}

@Suite struct SourceHostTests {
    static func address(_ text: String, port: Int = 1) throws -> DatagramAddress {
        try #require(DatagramAddress(try SocketAddress(ipAddress: text, port: port)))
    }

    @Test func aHostIgnoresItsPortAndAPrefixItsLowBits() throws {
        let a = SourceHost(try Self.address("192.0.2.7", port: 1000))
        let b = SourceHost(try Self.address("192.0.2.7", port: 2000))
        let c = SourceHost(try Self.address("192.0.2.200"))
        let d = SourceHost(try Self.address("192.0.3.7"))
        #expect(a == b)
        #expect(a != c)
        #expect(a.prefix(ipv4: 24, ipv6: 64) == c.prefix(ipv4: 24, ipv6: 64))
        #expect(a.prefix(ipv4: 24, ipv6: 64) != d.prefix(ipv4: 24, ipv6: 64))
        #expect(a.prefix(ipv4: 16, ipv6: 64) == d.prefix(ipv4: 16, ipv6: 64))
        #expect(a.prefix(ipv4: 24, ipv6: 64).description == "192.0.2.0/24")
    }

    @Test func ipv6PrefixesAndMappedIPv4() throws {
        let a = SourceHost(try Self.address("2001:db8:1:2::5"))
        let b = SourceHost(try Self.address("2001:db8:1:2:ffff::9"))
        let c = SourceHost(try Self.address("2001:db8:1:3::5"))
        #expect(a != b)
        #expect(a.prefix(ipv4: 24, ipv6: 64) == b.prefix(ipv4: 24, ipv6: 64))
        #expect(a.prefix(ipv4: 24, ipv6: 64) != c.prefix(ipv4: 24, ipv6: 64))
        #expect(a.prefix(ipv4: 24, ipv6: 48) == c.prefix(ipv4: 24, ipv6: 48))
        #expect(SourceHost(try Self.address("::ffff:192.0.2.7")) == SourceHost(try Self.address("192.0.2.7")))
    }
}

/// The limits per host and prefix, driven through the server core with time as a parameter (issue 19, item 3).
@Suite struct HostLimitTests {
    typealias Harness = ServerCoreTests.Harness

    static func harness(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> Harness {
        var configuration = ServerConfiguration()
        configuration.hostLimits = .standard
        configure(&configuration)
        return Harness(core: ServerCore(configuration: configuration))
    }

    static func address(_ host: UInt32, port: Int) -> ConnectionID {
        .datagram(DatagramAddress(ipv4: host, port: UInt16(port)))
    }

    /// 127.a.b.c as 32 bits.
    static func loopback(_ a: UInt32, _ b: UInt32, _ c: UInt32) -> UInt32 { 0x7F00_0000 | a << 16 | b << 8 | c }

    static func ping(_ number: UInt32) -> Packet {
        Packet(number: number, .ping(Ping(player: 0, count: 0, sendTime: 0)))
    }

    @Test func fortySocketsOnOneHostShareItsPacketLimit() throws {
        var harness = Self.harness { $0.hostLimits.packetsPerHost = 400 }
        let host = Self.loopback(0, 0, 5)
        // 40 ports, 50 packets each, in one instant: 2,000 packets, each port far below the per-sender 400/s.
        for round in 0..<50 {
            for port in 0..<40 {
                harness.send(Self.ping(UInt32(round + 1)), from: Self.address(host, port: 40_000 + port))
            }
        }
        let stats = harness.core.stats
        #expect(stats.rejections(.rateLimited) == 0, "no single sender is over its own rate")
        #expect(stats.rejections(.hostRateLimited) == 2_000 - 400, "the host is held to 400 in the second")
        #expect(stats.rejections(.unknownPeer) == 400)
        // Another host in another prefix is untouched.
        harness.send(Self.ping(1), from: Self.address(Self.loopback(9, 0, 1), port: 40_000))
        #expect(harness.core.stats.rejections(.unknownPeer) == 401)
        // A second later the host's count has slid out of the window and it is heard again.
        harness.now = harness.now + .seconds(2)
        harness.send(Self.ping(1), from: Self.address(host, port: 40_000))
        #expect(harness.core.stats.rejections(.unknownPeer) == 402)
    }

    @Test func fortyHostsOfOnePrefixShareItsPacketLimit() throws {
        var harness = Self.harness { $0.hostLimits.packetsPerPrefix = 400 }
        // 40 hosts of 127.0.6.0/24, 50 packets each, in one instant: no host is near its own 4,000.
        for round in 0..<50 {
            for host in 1...40 {
                harness.send(
                    Self.ping(UInt32(round + 1)), from: Self.address(Self.loopback(0, 6, UInt32(host)), port: 1))
            }
        }
        let stats = harness.core.stats
        #expect(stats.rejections(.hostRateLimited) == 0)
        #expect(stats.rejections(.prefixRateLimited) == 2_000 - 400)
        // The next /24 is another prefix.
        harness.send(Self.ping(1), from: Self.address(Self.loopback(0, 7, 1), port: 1))
        #expect(harness.core.stats.rejections(.unknownPeer) == 401)
    }

    @Test func handshakesPerPrefixAreRateLimited() throws {
        // The prefix's share of the matches (39 of 5,000) would bind before its handshake rate.
        var harness = Self.harness { $0.hostLimits.prefixShare = nil }
        var welcomed = 0
        for host in 1...100 where (try? harness.join(Self.address(Self.loopback(0, 8, UInt32(host)), port: 1))) != nil {
            welcomed += 1
        }
        #expect(welcomed == 80, "the standard 80 handshakes a second per prefix, from 100 hosts under their own 20")
        #expect(harness.core.stats.rejections(.handshakeRateLimited) == 20)
        // A second later the prefix is heard again.
        harness.now = harness.now + .seconds(2)
        #expect((try? harness.join(Self.address(Self.loopback(0, 8, 200), port: 1))) != nil)
    }

    @Test func seventyThousandSpoofedOneByteSourcesDoNotStopSixteenNewPlayers() throws {
        var harness = Self.harness()
        var random = SeededRandom(seed: 19)
        var answered = 0
        for source in 0..<70_000 {
            // One byte each from addresses spread over 127.0.0.0/8 and random ports, as a spoofing sender would.
            let spoofed = Self.address(
                0x7F00_0000 | UInt32(truncatingIfNeeded: random.next()) & 0x00FF_FFFF,
                port: Int(random.next() % 64_512) + 1_024)
            harness.sendRaw([0x53], from: spoofed)
            // Sixteen new players arrive in the middle of the flood, all within the same second.
            if source % 4_375 == 4_374 {
                let player = Self.address(Self.loopback(0, 0, 1), port: 50_000 + source / 4_375)
                if (try? harness.join(player)) != nil { answered += 1 }
            }
        }
        #expect(answered == 16, "every new player got a Challenge and a Welcome")
        let stats = harness.core.stats
        #expect(
            stats.rejections(.tooShort) + stats.rejections(.rateLimited) + stats.rejections(.hostRateLimited)
                + stats.rejections(.prefixRateLimited) == 70_000, "every spoofed datagram is counted")
        #expect(stats.sessions == 16)
    }

    /// A spoofer forging a host's address (other ports) and its prefix's floods the unverified budgets of both, and
    /// a new player of that host still joins every time: its first Hello is charged to its own port alone (it only
    /// asks for a Challenge), and its second proves the address with the cookie, so it is counted with verified
    /// traffic, which no spoofer reaches (issue 24, item 6).
    @Test func aHostUnderASpoofedFloodStillJoins() throws {
        var harness = Self.harness()
        var random = SeededRandom(seed: 24)
        let victim = Self.loopback(0, 3, 1)
        var joined = 0
        for packet in 0..<50_000 {
            // 50,000 packets in one second, a third each: garbage from the victim's own address on random ports,
            // cookie-less Hellos from there, and garbage from the rest of its /24.
            let bits = random.next()
            let port = 1_024 + Int((bits >> 16) % 60_000)
            switch packet % 3 {
            case 0: harness.sendRaw([0x53], from: Self.address(victim, port: port))
            case 1:
                harness.send(
                    Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2))), from: Self.address(victim, port: port)
                )
            default:
                harness.sendRaw([0x53], from: Self.address(Self.loopback(0, 3, UInt32(2 + bits % 250)), port: port))
            }
            _ = harness.drain()
            // Ten new players of the victim's host arrive in the middle of the flood, from ports it did not forge.
            if packet % 5_000 == 4_999, (try? harness.join(Self.address(victim, port: 2 + packet / 5_000))) != nil {
                joined += 1
            }
        }
        #expect(joined == 10, "every new player of the flooded host was seated")
        let stats = harness.core.stats
        #expect(
            stats.rejections(.hostRateLimited) + stats.rejections(.prefixRateLimited) > 10_000, "the flood was held")
        #expect(stats.sessions == 10)
    }

    @Test func oneHostsTenThousandHandshakesCannotTakeAllMatches() throws {
        var harness = Self.harness { $0.maxMatches = 200 }
        let attacker = Self.loopback(0, 0, 9)
        var taken = 0
        var mostHeld = 0
        for attempt in 0..<10_000 {
            // An honest-looking client: it answers its Challenge, then never plays.
            if (try? harness.join(Self.address(attacker, port: 10_000 + attempt))) != nil { taken += 1 }
            mostHeld = max(mostHeld, harness.core.stats.sessions)
            harness.now = harness.now + .milliseconds(1)
            if attempt % 100 == 99 { harness.core.tick(now: harness.now) }
            _ = harness.drain()
        }
        #expect(mostHeld <= 64, "never more than the host's session limit at once")
        #expect(taken <= 20 * 11, "at most 20 handshakes in any second of the 10 s run")
        #expect(harness.core.stats.rejections(.handshakeRateLimited) >= 10_000 - 20 * 11)
        // Everyone else still gets a seat: 32 players from 32 other networks.
        var seated = 0
        for player in 0..<32 {
            if (try? harness.join(Self.address(Self.loopback(1, UInt32(player), 1), port: 20_000))) != nil {
                seated += 1
            }
        }
        #expect(seated == 32)
        #expect(harness.core.stats.rejections(.serverFull) == 0)
    }

    /// Sixteen hosts of one /24 under their own limits cannot take the server's matches: the prefix holds at most its
    /// share, and other networks are seated beside it (issue 24, item 7).
    @Test func onePrefixHoldsAtMostItsShareOfTheMatches() throws {
        var harness = Self.harness {
            $0.maxMatches = 10_000
            // Room enough that the prefix's share of sessions (and its 256 per prefix) does not bind first.
            $0.maxSessions = 100_000
            $0.hostLimits.sessionsPerPrefix = nil
            $0.hostLimits.prefixShare = 1.0 / 100
        }
        // 16 hosts of 127.0.10.0/24, 40 Puck players each, 40 handshakes a second (under every rate limit).
        let seated = harness.joins(640, every: .milliseconds(25)) { attempt in
            Self.address(Self.loopback(0, 10, UInt32(1 + attempt % 16)), port: 10_000 + attempt)
        }
        let stats = harness.core.stats
        #expect(stats.matches == 100, "1/100 of 10,000 matches, whatever the hosts")
        #expect(seated == 200, "two players to each of its hundred matches")
        #expect(stats.rejections(.prefixMatchesFull) == 640 - 200)
        // Another network still opens matches, and a player of the full prefix may still join one it did not open.
        let other = Self.address(Self.loopback(0, 11, 1), port: 10_000)
        _ = try harness.join(other)
        _ = try harness.join(Self.address(Self.loopback(0, 10, 1), port: 20_000))
        #expect(harness.core.stats.matches == 101)
        #expect(harness.core.stats.sessions == 202)
    }

    @Test func aPrefixHoldsAtMostItsShareOfTheSessions() throws {
        var harness = Self.harness {
            $0.maxSessions = 10_000
            $0.hostLimits.prefixShare = 1.0 / 100
        }
        // Snap tables of four from five hosts: a hundred sessions fill the prefix's share, no match share binds first.
        let welcomed = harness.joins(130, every: .milliseconds(100), game: .snap, seats: 4) { attempt in
            Self.address(Self.loopback(0, 12, UInt32(1 + attempt % 5)), port: 10_000 + attempt)
        }
        #expect(welcomed == 100)
        #expect(harness.core.stats.rejections(.prefixSessionsFull) == 30)
    }

    /// On a small server a share never leaves a prefix less than one host's room: 1/128 of 100 matches would be
    /// none, and a household behind one address could not play.
    @Test func aShareNeverLeavesAPrefixLessThanOneHostsRoom() throws {
        var harness = Self.harness {
            $0.maxMatches = 100
            $0.maxSessions = 500
        }
        // One host, two players a match, well under every rate limit.
        let seated = harness.joins(80, every: .milliseconds(100)) { port in
            Self.address(Self.loopback(0, 13, 1), port: 10_000 + port)
        }
        #expect(seated == 64, "the host's own 64 sessions, in 32 matches")
        #expect(harness.core.stats.rejections(.hostSessionsFull) == 16)
        #expect(harness.core.stats.rejections(.prefixMatchesFull) == 0)
        #expect(harness.core.stats.rejections(.prefixSessionsFull) == 0)
    }

    @Test func handshakesPerHostAreRateLimitedAndAnswered() throws {
        var harness = Self.harness()
        let host = Self.loopback(0, 0, 7)
        var welcomed = 0
        for port in 0..<50 where (try? harness.join(Self.address(host, port: 30_000 + port))) != nil { welcomed += 1 }
        #expect(welcomed == 20, "the standard 20 handshakes a second")
        #expect(harness.core.stats.rejections(.handshakeRateLimited) == 30)
        // The refused ones were told why (their address was proven by the cookie, so a reply is safe).
        harness.send(
            Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2))), from: Self.address(host, port: 39_999))
        let challenge = try #require(harness.drain().first)
        guard case .challenge(let cookie) = challenge.packet.message else { throw PlayError(text: "no challenge") }
        harness.send(
            Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2, cookie: cookie.cookie))),
            from: Self.address(host, port: 39_999))
        let reply = try #require(harness.drain().first)
        guard case .reject(let reject) = reply.packet.message else { throw PlayError(text: "no reject") }
        #expect(reject.reason == .rateLimited)
    }

    @Test func sessionsPerHostAndPerPrefixAreCapped() throws {
        var harness = Self.harness {
            $0.hostLimits.sessionsPerHost = 3
            $0.hostLimits.sessionsPerPrefix = 5
        }
        var welcomed: [Int] = []
        for index in 0..<8 {
            // Hosts .1, .1, .1, .1, .2, .2, .2, .2 of one /24.
            let player = Self.address(Self.loopback(0, 4, UInt32(1 + index / 4)), port: 30_000 + index)
            if (try? harness.join(player, game: .snap, seats: 4)) != nil { welcomed.append(index) }
            harness.now = harness.now + .milliseconds(200)
        }
        #expect(welcomed == [0, 1, 2, 4, 5], "three from the first host, then the prefix's fifth")
        #expect(harness.core.stats.rejections(.hostSessionsFull) == 1)
        #expect(harness.core.stats.rejections(.prefixSessionsFull) == 2)
        // A session that ends frees its place.
        harness.send(
            Packet(.disconnect(Disconnect(reason: .quit))), from: Self.address(Self.loopback(0, 4, 1), port: 30_000))
        _ = harness.drain()
        #expect((try? harness.join(Self.address(Self.loopback(0, 4, 1), port: 30_100), game: .snap, seats: 4)) != nil)
    }

    @Test func aSessionThatNeverPlayedFreesItsSeatWhenItDrops() throws {
        var harness = Harness()
        let a = try ServerCoreTests.address(46_000)
        let b = try ServerCoreTests.address(46_001)
        _ = try harness.join(a)
        _ = try harness.join(b)
        // a plays; b never sends anything after its Welcome.
        var elapsed = TimeAmount.zero
        harness.play(until: .milliseconds(5_200), elapsed: &elapsed, live: [a])
        #expect(harness.core.stats.detached == 0, "b's seat is not held through the resume window")
        #expect(harness.core.stats.sessions == 1)
        #expect(harness.core.stats.forfeits == 1)
    }

    /// A spoofer who forges a player's exact address and floods unsealed packets uses up only the unverified
    /// budget of that address, host and prefix: the player's sealed packets are still taken, and its session lives.
    @Test func aFloodForgedFromAPlayersAddressDoesNotUseUpItsBudget() throws {
        var harness = Self.harness()
        let a = try ServerCoreTests.address(46_020)
        let b = try ServerCoreTests.address(46_021)
        _ = try harness.join(a)
        _ = try harness.join(b)
        var elapsed = TimeAmount.zero
        for _ in 0..<30 {
            // 20,000 forged packets a second from b's own address: five times its host's whole budget.
            for _ in 0..<4_000 { harness.sendUnsealed([0x53, 0x4E, 0x41, 0x50, 0, 0, 0, 9, 0, 6], from: b) }
            harness.play(until: elapsed + .milliseconds(200), elapsed: &elapsed, live: [a, b])
        }
        #expect(harness.core.stats.totalRejected >= 120_000, "every forged packet was refused and counted")
        #expect(harness.core.stats.sessions == 2, "b's session lived through 6 s of forged traffic")
        #expect(harness.core.stats.detached == 0)
    }

    /// A captured sealed datagram verifies when replayed, but brings nothing new: replaying it must not keep a
    /// player's seat alive after the player is gone.
    @Test func aReplayedDatagramIsNoSignOfLife() throws {
        var harness = Harness()
        let a = try ServerCoreTests.address(46_030)
        let b = try ServerCoreTests.address(46_031)
        _ = try harness.join(a)
        _ = try harness.join(b)
        harness.send(Packet(number: 1, .chat(Chat(text: "hi"))), from: b)
        let key = try #require(harness.keys[b])
        let captured = sealed(
            encode(Packet(number: 7, .pong(Ping(player: 0, count: 0, sendTime: 0)))), with: key, from: .client)
        harness.sendUnsealed(captured, from: b)
        // b is gone; an attacker replays its last datagram every 200 ms.
        var elapsed = TimeAmount.zero
        for _ in 0..<40 {
            harness.sendUnsealed(captured, from: b)
            harness.play(until: elapsed + .milliseconds(200), elapsed: &elapsed, live: [a])
        }
        // Refused as stale while b's session lasted (the first 5 s), as from an unknown peer after it detached.
        #expect(harness.core.stats.rejections(.stale) + harness.core.stats.rejections(.duplicate) >= 20)
        #expect(harness.core.stats.detached == 1, "b timed out for silence and its seat waits for a resume")
    }

    /// A TCP or WebSocket connection that never takes a seat is closed after the handshake limit and counted; one
    /// that handshakes in time stays open.
    @Test func aStreamWithoutASeatIsClosedAfterTheHandshakeLimit() throws {
        var harness = Harness()
        let idle = ConnectionID.stream(9)
        let player = ConnectionID.stream(10)
        harness.core.streamOpened(idle, from: nil, now: harness.now)
        harness.core.streamOpened(player, from: nil, now: harness.now)
        harness.core.receive(
            Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2))), from: player, now: harness.now)
        #expect(harness.drain().contains { $0.connection == player && $0.packet.message.type == .welcome })
        var closed: [Outgoing] = []
        for _ in 0..<12 {
            harness.advance(.seconds(1))
            closed += harness.drain().filter(\.closeAfter)
        }
        #expect(closed.map(\.connection) == [idle])
        #expect(harness.core.stats.rejections(.handshakeTimeout) == 1)
        #expect(harness.core.stats.sessionsOpened == 1)
    }

    /// Every client acknowledges its Welcome and answers Pings: that is not playing. A seat whose session sent only
    /// those is still freed at once when it drops.
    @Test func acksAndPongsAloneAreNotPlaying() throws {
        var harness = Harness()
        let a = try ServerCoreTests.address(46_010)
        let b = try ServerCoreTests.address(46_011)
        _ = try harness.join(a)
        _ = try harness.join(b)
        harness.keepAlive(b, number: 1)
        var elapsed = TimeAmount.zero
        harness.play(until: .milliseconds(5_200), elapsed: &elapsed, live: [a])
        #expect(harness.core.stats.detached == 0, "b's seat is not held through the resume window")
        #expect(harness.core.stats.sessions == 1)
    }
}

extension ServerCoreTests.Harness {
    /// Tries `count` UDP joins from `source(attempt)`, one every `interval`, draining what the server sent in between;
    /// returns how many were welcomed.
    mutating func joins(
        _ count: Int, every interval: TimeAmount, game: GameKind = .puck, seats: UInt8 = 2,
        from source: (Int) -> ConnectionID
    ) -> Int {
        var welcomed = 0
        for attempt in 0..<count {
            if (try? join(source(attempt), game: game, seats: seats)) != nil { welcomed += 1 }
            now = now + interval
            _ = drain()
        }
        return welcomed
    }
}
