import NIOCore
import SkirmishGames
import SkirmishNet
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishServer

/// Issue 19, items 1, 2 and 5 on the server core, without a socket: who may take a seat, and what a datagram from a
/// player's address must prove before anything in it is acted on.
@Suite struct SessionSecurityTests {
    typealias Harness = ServerCoreTests.Harness

    static func address(_ port: Int) throws -> ConnectionID { try ServerCoreTests.address(port) }

    /// Two seated Puck players at `base` and `base + 1`.
    static func pair(_ harness: inout Harness, base: Int) throws -> (ConnectionID, Welcome, ConnectionID, Welcome) {
        let a = try address(base)
        let b = try address(base + 1)
        let welcomeA = try harness.join(a)
        let welcomeB = try harness.join(b)
        _ = harness.drain()
        return (a, welcomeA, b, welcomeB)
    }

    /// The bytes of a resume Hello for `token` from `address`, once the cookie round is done (ready to seal).
    static func resumeHello(_ harness: inout Harness, token: UInt64, from address: ConnectionID) throws -> [UInt8] {
        harness.send(Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2, token: token))), from: address)
        guard case .challenge(let challenge)? = harness.drain().first?.packet.message else {
            Issue.record("expected a Challenge to the resume Hello")
            throw CancellationError()
        }
        return encode(
            Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2, cookie: challenge.cookie, token: token))))
    }

    // MARK: Item 1: seats that cannot be stolen

    /// Finding: tokens came from SplitMix64 seeded with the public default seed, so two servers with the same seed
    /// handed out the same tokens, computable offline. Now they come from the system's CSPRNG.
    @Test func resumeTokensAndKeysDoNotFollowFromTheSeed() throws {
        var first = Harness()
        var second = Harness()
        let one = try first.join(try Self.address(50_000))
        let two = try second.join(try Self.address(50_000))
        #expect(first.core.configuration.seed == second.core.configuration.seed)
        #expect(one.resumeToken != two.resumeToken)
        var seeded = SeededRandom(seed: first.core.configuration.seed)
        #expect(one.resumeToken != seeded.next())
        #expect(one.sessionKey != .zero && one.sessionKey != two.sessionKey)
    }

    /// Finding: a resume took a seat while its owner was connected, from any address, and the owner was never told.
    @Test func aStolenTokenCannotTakeALiveSeat() throws {
        var harness = Harness()
        let (a, _, b, welcomeB) = try Self.pair(&harness, base: 50_010)
        let thief = try Self.address(50_019)
        // The thief knows b's token, not b's session key: its Hellos carry no trailer.
        harness.sendUnsealed(try Self.resumeHello(&harness, token: welcomeB.resumeToken, from: thief), from: thief)
        let replies = harness.drain()
        #expect(replies.count == 1)
        guard case .reject(let reject)? = replies.first?.packet.message else {
            Issue.record("expected a Reject, got \(replies.map(\.packet.message))")
            return
        }
        #expect(reject.reason == .seatInUse)
        #expect(replies.first?.connection == thief && replies.first?.key == nil)
        #expect(harness.core.stats.rejections(.seatInUse) == 1)
        #expect(harness.core.stats.resumes == 0)
        // b still holds its seat at its own address: its packets are still taken, the thief's are not.
        harness.send(Packet(number: 1, .ping(Ping(player: 0, count: 1, sendTime: 0))), from: b)
        #expect(harness.drain().contains { $0.connection == b && $0.packet.message.type == .pong })
        harness.send(Packet(number: 2, .ping(Ping(player: 0, count: 2, sendTime: 0))), from: thief)
        #expect(harness.drain().isEmpty)
        #expect(harness.core.stats.rejections(.unknownPeer) == 1)
        #expect(harness.core.stats.sessions == 2 && harness.core.stats.detached == 0)
        _ = a
    }

    /// The owner moved (a phone changed networks) and the server has not noticed yet: a resume that proves the
    /// session key takes the seat, and the old address is told so.
    @Test func aResumeProvingTheKeyTakesOverAndTellsTheOldAddress() throws {
        var harness = Harness()
        let (_, _, b, welcomeB) = try Self.pair(&harness, base: 50_020)
        let keyB = try #require(harness.keys[b])
        let moved = try Self.address(50_029)
        let resumed = try harness.join(moved, token: welcomeB.resumeToken, proof: keyB)
        #expect(resumed.peer == welcomeB.peer && resumed.seat == welcomeB.seat)
        #expect(resumed.sessionKey == keyB, "the key belongs to the session, not to the address")
        #expect(harness.core.stats.resumes == 1)
        harness.send(Packet(number: 1, .ping(Ping(player: 0, count: 1, sendTime: 0))), from: b)
        #expect(harness.core.stats.rejections(.unknownPeer) == 1, "the old address has no session any more")
    }

    @Test func theOldAddressHearsDisconnectResumedElsewhereSealedWithTheKey() throws {
        var harness = Harness()
        let (_, _, b, welcomeB) = try Self.pair(&harness, base: 50_030)
        let keyB = try #require(harness.keys[b])
        let moved = try Self.address(50_039)
        let hello = try Self.resumeHello(&harness, token: welcomeB.resumeToken, from: moved)
        harness.sendUnsealed(sealed(hello, with: keyB, from: .client), from: moved)
        let out = harness.drain()
        let toOld = try #require(out.first { $0.connection == b })
        #expect(toOld.packet.message == .disconnect(Disconnect(reason: .resumedElsewhere)))
        #expect(toOld.key == keyB && toOld.closeAfter)
        #expect(out.contains { $0.connection == moved && $0.packet.message.type == .welcome })
    }

    /// Finding: the token was never rotated. Now it is single-use: each resume's Welcome carries a new one.
    @Test func everyResumeRotatesTheTokenAndTheOldOneIsDead() throws {
        var harness = Harness()
        let (a, _, b, welcomeB) = try Self.pair(&harness, base: 50_040)
        // b plays (a chat is enough), so its seat is held for a resume when it drops; one that never played is freed.
        harness.send(Packet(number: 1, .chat(Chat(text: "hi"))), from: b)
        var elapsed = TimeAmount.zero
        harness.play(until: .milliseconds(5_200), elapsed: &elapsed, live: [a])
        #expect(harness.core.stats.detached == 1)
        let back = try Self.address(50_048)
        let resumed = try harness.join(back, token: welcomeB.resumeToken)
        #expect(resumed.peer == welcomeB.peer)
        #expect(resumed.resumeToken != 0 && resumed.resumeToken != welcomeB.resumeToken)
        // b drops again; the first token is spent, the new one works.
        harness.play(until: .milliseconds(10_600), elapsed: &elapsed, live: [a])
        #expect(harness.core.stats.detached == 1)
        let again = try Self.address(50_049)
        #expect(throws: PlayError.self) { try harness.join(again, token: welcomeB.resumeToken) }
        #expect(harness.core.stats.rejections(.resumeExpired) == 1)
        let third = try harness.join(try Self.address(50_047), token: resumed.resumeToken)
        #expect(third.peer == welcomeB.peer && third.resumeToken != resumed.resumeToken)
        #expect(harness.core.stats.resumes == 2)
    }

    /// A token is bound to its session's transport: a UDP seat is not resumed over TCP or WebSocket.
    @Test func aTokenFromAUDPSessionDoesNotResumeOverAStream() throws {
        var harness = Harness()
        let (a, _, b, welcomeB) = try Self.pair(&harness, base: 50_050)
        // b plays (a chat is enough), so its seat is held for a resume when it drops; one that never played is freed.
        harness.send(Packet(number: 1, .chat(Chat(text: "hi"))), from: b)
        var elapsed = TimeAmount.zero
        harness.play(until: .milliseconds(5_200), elapsed: &elapsed, live: [a])
        let stream = ConnectionID.stream(7)
        harness.core.receive(
            Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2, token: welcomeB.resumeToken))), from: stream,
            now: harness.now)
        guard case .reject(let reject)? = harness.drain().first?.packet.message else {
            Issue.record("expected a Reject")
            return
        }
        #expect(reject.reason == .resumeExpired)
        #expect(harness.core.stats.resumes == 0 && harness.core.stats.detached == 1)
    }

    // MARK: Issue 32, item 4: the sealed resume Hello

    /// `WireProtocol.md`, "Resuming a seat": a Hello from an address without a session is sealed exactly when 8 bytes
    /// follow its padding; any other surplus is `trailingBytes`, and above 1,200 bytes it is `tooLarge`, trailer or not.
    @Test func aHelloIsSealedOnlyWhenEightBytesFollowItsPaddingAndIsHeldTo1200Bytes() throws {
        var harness = Harness()
        let stranger = try Self.address(50_100)
        func count(_ reason: Rejection) -> UInt64 { harness.core.stats.rejections(reason) }
        let hello = encode(Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2, token: 99))))
        var longest = ServerCoreTests.hello(game: .puck, seats: 2, token: 99)
        longest.name = String(repeating: "n", count: WireLimits.maxName)
        let longestHello = encode(Packet(.hello(longest)))
        #expect(hello.count == 74 && longestHello.count == 75)
        let trailer: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        for sealedHello in [hello + trailer, longestHello + trailer] {
            harness.sendUnsealed(sealedHello, from: stranger)
            let replies = harness.drain()
            #expect(replies.map(\.packet.message.type) == [.challenge], "\(sealedHello.count) bytes: a sealed Hello")
        }
        for surplus in [1, 7, 9, 16] {
            harness.sendUnsealed(hello + [UInt8](repeating: 1, count: surplus), from: stranger)
            #expect(harness.drain().isEmpty)
        }
        #expect(count(.trailingBytes) == 4)
        harness.sendUnsealed(hello + [UInt8](repeating: 0, count: 1_201 - hello.count), from: stranger)
        #expect(harness.drain().isEmpty && count(.tooLarge) == 1)
    }

    /// `WireProtocol.md`, "Resuming a seat": a trailer that does not verify is refused as `Reject(11)` for a seat whose
    /// owner is still connected (and is no `bad_mac`), and is not read for a seat held after its owner dropped, nor
    /// for a first join.
    @Test func aWrongTrailerIsSeatInUseForALiveSeatAndUnreadForAHeldOne() throws {
        var harness = Harness()
        let (a, _, b, welcomeB) = try Self.pair(&harness, base: 50_110)
        let wrong = SessionKey(key0: 1, key1: 2)
        let mover = try Self.address(50_119)
        let hello = try Self.resumeHello(&harness, token: welcomeB.resumeToken, from: mover)
        harness.sendUnsealed(sealed(hello, with: wrong, from: .client), from: mover)
        let replies = harness.drain()
        guard case .reject(let reject)? = replies.first?.packet.message, replies.count == 1 else {
            Issue.record("expected one Reject, got \(replies.map(\.packet.message))")
            return
        }
        #expect(reject.reason == .seatInUse && replies.first?.key == nil, "unsealed")
        #expect(harness.core.stats.rejections(.seatInUse) == 1 && harness.core.stats.rejections(.badMAC) == 0)
        #expect(harness.core.stats.resumes == 0)
        // b plays, then drops: its seat is held, and the same wrong trailer is not read.
        harness.send(Packet(number: 1, .chat(Chat(text: "hi"))), from: b)
        var elapsed = TimeAmount.zero
        harness.play(until: .milliseconds(5_200), elapsed: &elapsed, live: [a])
        #expect(harness.core.stats.detached == 1)
        let resumed = try harness.join(try Self.address(50_118), token: welcomeB.resumeToken, proof: wrong)
        #expect(resumed.peer == welcomeB.peer && harness.core.stats.resumes == 1)
        // A first join ignores a trailer.
        let fresh = try harness.join(try Self.address(50_117), proof: wrong)
        #expect(fresh.peer != welcomeB.peer && harness.core.stats.rejections(.badMAC) == 0)
    }

    // MARK: Item 2: spoofed packets after the handshake

    /// Finding: a 12-byte Disconnect spoofed from a player's address ended their session. Now it fails the MAC.
    @Test func aSpoofedDisconnectFromAPlayersAddressChangesNothing() throws {
        var harness = Harness()
        let (a, _, b, _) = try Self.pair(&harness, base: 50_060)
        for victim in [a, b] {
            harness.sendUnsealed(encode(Packet(.disconnect(Disconnect(reason: .quit)))), from: victim)
        }
        // The same packet sealed under the wrong key, or with a trailer of zeros.
        let forged = sealed(
            encode(Packet(.disconnect(Disconnect(reason: .quit)))), with: SessionKey(key0: 1, key1: 1), from: .client)
        harness.sendUnsealed(forged, from: a)
        harness.sendUnsealed(
            encode(Packet(.disconnect(Disconnect(reason: .quit)))) + [UInt8](repeating: 0, count: 8), from: b)
        #expect(harness.core.stats.rejections(.badMAC) == 4)
        #expect(harness.core.stats.sessions == 2 && harness.core.stats.sessionsClosed == 0)
        #expect(harness.core.stats.forfeits == 0)
        // The player's own Disconnect, sealed, still ends its session.
        harness.send(Packet(.disconnect(Disconnect(reason: .quit))), from: a)
        #expect(harness.core.stats.sessionsClosed == 1)
    }

    /// Finding: one spoofed PaddleState numbered 2³¹ − 1 ahead made the victim's real inputs stale for ever. Unsealed
    /// it is dropped unread; sealed (a hostile client of its own session) the jump is refused and never adopted.
    @Test func aFarFuturePaddleStateIsRefusedAndTheRealInputsStillCount() throws {
        var harness = Harness()
        let (a, _, _, _) = try Self.pair(&harness, base: 50_070)
        func paddle(_ number: UInt32) -> Packet {
            Packet(number: number, .paddleState(PaddleState(inputStep: number, x: 160, y: 400, vx: 0, vy: 0)))
        }
        harness.sendUnsealed(encode(paddle(0x7FFF_FFFF)), from: a)
        #expect(harness.core.stats.rejections(.badMAC) == 1)
        harness.send(paddle(0x7FFF_FFFF), from: a)
        #expect(harness.core.stats.rejections(.farFuture) == 1)
        for number in UInt32(1)...5 { harness.send(paddle(number), from: a) }
        #expect(harness.core.stats.rejections(.stale) == 0, "the honest numbers were not made stale")
        #expect(harness.core.stats.packetsReceived[MessageType.paddleState.index] == 6)
        // A reliable number far beyond the reorder window is refused too.
        harness.send(Packet(number: 1_000_000, .chat(Chat(text: "from the future"))), from: a)
        #expect(harness.core.stats.rejections(.farFuture) == 2)
    }

    /// Every datagram the server sends to a session carries a trailer that opens with the session key; handshake
    /// replies to an address without a session carry none.
    @Test func datagramsToASessionAreSealedAndHandshakeRepliesAreNot() throws {
        var harness = Harness()
        let a = try Self.address(50_080)
        harness.send(Packet(.hello(ServerCoreTests.hello(game: .puck, seats: 2))), from: a)
        let challenge = try #require(harness.drain().first)
        #expect(challenge.key == nil)
        _ = try harness.join(a)
        harness.advance(.milliseconds(300))
        harness.send(Packet(number: 1, .ping(Ping(player: 0, count: 1, sendTime: 0))), from: a)
        let out = harness.drain().filter { $0.connection == a }
        let key = try #require(harness.keys[a])
        #expect(!out.isEmpty)
        var buffer = [UInt8](repeating: 0, count: WireLimits.maxDatagram)
        for outgoing in out {
            #expect(outgoing.key == key)
            let datagram = buffer.withUnsafeMutableBytes { raw in Array(raw[0..<outgoing.encode(into: raw)]) }
            let opened = datagram.withUnsafeBytes { key.open($0, from: .server).map { Array($0) } }
            #expect(try opened.map { try Packet.decode($0) } == outgoing.packet)
        }
    }

    // MARK: Item 5: everything counted

    @Test func replayedStaleDuplicateAndUnsentAckAreCountedByReason() throws {
        var harness = Harness()
        let (a, _, _, _) = try Self.pair(&harness, base: 50_090)
        let pong = { (number: UInt32) in Packet(number: number, .pong(Ping(player: 0, count: 0, sendTime: 0))) }
        harness.send(pong(5), from: a)
        harness.send(pong(5), from: a)
        harness.send(pong(4), from: a)
        harness.send(Packet(number: 1, .chat(Chat(text: "once"))), from: a)
        harness.send(Packet(number: 1, .chat(Chat(text: "once"))), from: a)
        harness.send(Packet(.ack(Ack(cumulative: 50_000, bitfield: 0))), from: a)
        let stats = harness.core.stats
        #expect(stats.rejections(.duplicate) == 2)
        #expect(stats.rejections(.stale) == 1)
        #expect(stats.rejections(.unsentAck) == 1)
        let labels = ServerMetrics.snapshot(stats).series.compactMap { $0.labels["reason"] }
        for label in ["bad_mac", "stale", "duplicate", "far_future", "unsent_ack", "bad_name", "seat_in_use"] {
            #expect(labels.contains(label), "\(label)")
        }
    }

    /// Finding: names with control and bidi-override characters were relayed to other players.
    @Test(arguments: ["evil\u{202E}gnp", "two\nlines", "\u{1B}[2Jwipe", "iso\u{2066}late"])
    func aNameWithControlOrBidiCharactersIsRefusedAtHello(name: String) throws {
        var harness = Harness()
        let a = try Self.address(50_100)
        var hello = ServerCoreTests.hello(game: .puck, seats: 2)
        hello.name = name
        harness.send(Packet(.hello(hello)), from: a)
        guard case .challenge(let challenge)? = harness.drain().first?.packet.message else {
            Issue.record("expected a Challenge")
            return
        }
        hello.cookie = challenge.cookie
        harness.send(Packet(.hello(hello)), from: a)
        guard case .reject(let reject)? = harness.drain().first?.packet.message else {
            Issue.record("expected a Reject")
            return
        }
        #expect(reject.reason == .badName)
        #expect(harness.core.stats.rejections(.badName) == 1 && harness.core.stats.sessions == 0)
    }

    @Test func aSnapSignInWithABidiNameIsRefusedAndNotRelayed() throws {
        var harness = Harness()
        let a = try Self.address(50_110)
        let b = try Self.address(50_111)
        _ = try harness.join(a, game: .snap, seats: 2)
        _ = try harness.join(b, game: .snap, seats: 2)
        _ = harness.drain()
        harness.send(Packet(number: 1, .signInResponse(SignInResponse(name: "ok\u{202E}evil"))), from: a)
        harness.send(Packet(number: 1, .signInResponse(SignInResponse(name: "bob"))), from: b)
        #expect(harness.core.stats.rejections(.badValue) == 1)
        #expect(!harness.drain().contains { $0.packet.message.type == .serverReady })
    }
}
