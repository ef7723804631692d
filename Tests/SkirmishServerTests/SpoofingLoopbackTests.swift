import Foundation
import NIOCore
import NIOPosix
import SkirmishGames
import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Issue 19, item 2 on real loopback sockets against the real server: a hostile host sends a `Disconnect` and a
/// `PaddleState` numbered 2³¹ − 1 ahead toward a player's session, and the player plays on.
///
/// Two ways of sending them, both without root: from another port of 127.0.0.1 (the server does not know the address),
/// and from the victim's own address and port — a second socket bound beside the victim's with `SO_REUSEPORT`, which
/// the kernel allows to the same user. The second is what a raw-socket spoofer achieves, and before the session
/// trailer it ended the victim's session; only the trailer tells the server the packets apart now.
@Suite(.serialized) struct SpoofingLoopbackTests {
    /// A UDP player driven by hand from one thread: a ``SnapConnection`` over a plain socket with `SO_REUSEPORT`.
    final class Player {
        let fd: Int32
        let port: UInt16
        var connection: SnapConnection
        var seated = false
        var closed: SnapConnection.Cause?
        var step: UInt32 = 0
        /// The newest input step the server says it applied, from the latest snapshot.
        var lastApplied: UInt32 = 0
        var snapshots = 0
        private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2_048, alignment: 8)
        private var actions = ClientActions<SnapConnection>()

        init(serverPort: Int, name: String) throws {
            let fd = try SpoofingLoopbackTests.socket(reusePort: true, port: 0)
            self.fd = fd
            try SpoofingLoopbackTests.attach(fd, port: UInt16(serverPort), "connect", Glibc.connect)
            port = try SpoofingLoopbackTests.localPort(fd)
            var configuration = SnapConnection.Configuration(game: .puck, seats: 2)
            configuration.name = name
            configuration.pingInterval = nil
            connection = SnapConnection(configuration: configuration, transport: .udp, name: name)
            connection.start(now: .now(), into: &actions)
            execute()
        }

        deinit {
            close(fd)
            buffer.deallocate()
        }

        /// Writes what the connection produced and handles its events (an input for every snapshot of play).
        func execute() {
            var written = 0
            while written < actions.packetCount || actions.events.count > 0 {
                while written < actions.packetCount {
                    actions.withPacket(written) { bytes in
                        _ = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT))
                    }
                    written += 1
                }
                guard let event = actions.nextEvent() else { break }
                switch event {
                case .established, .resumed: seated = true
                case .closed:
                    if case .closed(let cause) = connection.state { closed = cause }
                case .message(.tableSnapshot(let snapshot)):
                    snapshots += 1
                    lastApplied = snapshot.lastInputStep
                    if snapshot.phase == .playing || snapshot.phase == .goalPause {
                        step &+= 1
                        let input = PaddleState(inputStep: step, x: 160, y: 400, vx: 0, vy: 0)
                        connection.send(.paddleState(input), now: .now(), into: &actions)
                    }
                default: break
                }
            }
            actions.removeAll()
        }

        /// Reads what arrived and runs the timers that are due.
        func pump() {
            while true {
                let size = recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                guard size > 0 else { break }
                connection.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<size]), now: .now(), into: &actions)
                execute()
            }
            let now = Instant.now()
            if now >= connection.nextDeadline {
                connection.tick(now: now, into: &actions)
                execute()
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    static func socket(reusePort: Bool, port: UInt16) throws -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: errno \(errno)") }
        var one: Int32 = 1
        if reusePort {
            try check(
                setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)), "SO_REUSEPORT",
                closing: fd)
        }
        try attach(fd, port: port, "bind to port \(port)", Glibc.bind)
        return fd
    }

    /// Calls `call` — `bind` or `connect` — on `fd` with 127.0.0.1:`port`; when it fails, closes `fd` and throws.
    static func attach(
        _ fd: Int32, port: UInt16, _ name: String, _ call: (Int32, UnsafePointer<sockaddr>?, socklen_t) -> Int32
    ) throws {
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                call(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try check(result, name, closing: fd)
    }

    /// Throws naming `name` and its errno when `result` is not 0, after closing `fd` (errno read before the close).
    static func check(_ result: Int32, _ name: String, closing fd: Int32) throws {
        guard result != 0 else { return }
        let failure = errno
        close(fd)
        throw Failure("\(name): errno \(failure)")
    }

    static func localPort(_ fd: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw Failure("getsockname: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Sends the hostile datagrams to the server from a socket bound to `sourcePort` (0: any free port).
    static func attack(serverPort: Int, sourcePort: UInt16) throws {
        let fd = try socket(reusePort: sourcePort != 0, port: sourcePort)
        defer { close(fd) }
        var server = loopback(port: UInt16(serverPort))
        let datagrams = [
            try Packet(.disconnect(Disconnect(reason: .quit))).encoded(),
            try Packet(
                number: 0x7FFF_FFFF, .paddleState(PaddleState(inputStep: 0x7FFF_FFFF, x: 10, y: 300, vx: 0, vy: 0))
            )
            .encoded(),
            // A forged trailer does no better than none.
            try Packet(.disconnect(Disconnect(reason: .quit))).encoded() + [1, 2, 3, 4, 5, 6, 7, 8],
        ]
        for datagram in datagrams {
            let sent = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &server) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            guard sent == datagram.count else { throw Failure("sendto: errno \(errno)") }
        }
    }

    /// The finding's blind sweep, with forged source addresses: a raw socket (root only) sends a `Disconnect` to the
    /// server from 127.0.0.1 and every port from 1,024 to 65,535 — the players' among them. Returns datagrams sent.
    /// `between` runs every 1,000 datagrams: the players go on playing during the sweep, as real ones would (on a busy
    /// machine the sweep takes seconds, and players silent that long would be taken for gone).
    static func rawSweep(serverPort: Int, between: () -> Void = {}) throws -> Int {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_RAW))
        guard fd >= 0 else { throw Failure("raw socket: errno \(errno)") }
        defer { close(fd) }
        let payload = try Packet(.disconnect(Disconnect(reason: .quit))).encoded()
        var datagram = [UInt8](repeating: 0, count: 20 + 8 + payload.count)
        // IPv4 header (the kernel fills in the checksum and, when 0, the id): 127.0.0.1 → 127.0.0.1, UDP, TTL 64.
        datagram[0] = 0x45
        datagram[2] = UInt8(datagram.count >> 8)
        datagram[3] = UInt8(datagram.count & 0xFF)
        datagram[8] = 64
        datagram[9] = UInt8(IPPROTO_UDP)
        for offset in [12, 16] { datagram.replaceSubrange(offset..<(offset + 4), with: [127, 0, 0, 1]) }
        // UDP header: the destination and length fixed, the checksum 0 (none, allowed over IPv4).
        datagram[22] = UInt8(serverPort >> 8)
        datagram[23] = UInt8(serverPort & 0xFF)
        datagram[24] = UInt8((8 + payload.count) >> 8)
        datagram[25] = UInt8((8 + payload.count) & 0xFF)
        datagram.replaceSubrange(28..., with: payload)
        var server = loopback(port: UInt16(serverPort))
        var sent = 0
        for source in 1_024...65_535 where source != serverPort {
            datagram[20] = UInt8(source >> 8)
            datagram[21] = UInt8(source & 0xFF)
            if sendRaw(fd, datagram, to: &server) { sent += 1 }
            if source % 1_000 == 0 { between() }
        }
        return sent
    }

    /// Sends one whole IPv4 datagram (header included) on raw socket `fd`; whether the kernel took all of it.
    static func sendRaw(_ fd: Int32, _ datagram: [UInt8], to server: inout sockaddr_in) -> Bool {
        let count = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &server) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return count == datagram.count
    }

    struct Outcome: Sendable {
        var victimClosed: String?
        var stepAtAttack: UInt32
        var lastApplied: UInt32
        var spoofedFromSamePort: Bool
    }

    /// Two players seat and play; once inputs flow, the attack is sent; then the victim must see the server apply
    /// an input it sent after the attack, within `limit` (a deadline, generous for a busy machine).
    static func run(serverPort: Int, sameAddress: Bool, raw: Bool = false, limit: Duration) throws -> Outcome {
        let victim = try Player(serverPort: serverPort, name: "victim")
        let other = try Player(serverPort: serverPort, name: "other")
        let deadline = ContinuousClock.now + limit
        var polls = [victim.fd, other.fd].map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        func pumpUntil(_ done: () -> Bool) throws {
            while !done() {
                guard ContinuousClock.now < deadline else { throw Failure("deadline passed") }
                _ = poll(&polls, nfds_t(polls.count), 5)
                victim.pump()
                other.pump()
                if let cause = victim.closed ?? other.closed { throw Failure("a player was closed: \(cause)") }
            }
        }
        try pumpUntil { victim.seated && other.seated && victim.lastApplied > 0 }
        let stepAtAttack = victim.step
        if raw {
            let sent = try rawSweep(serverPort: serverPort) {
                victim.pump()
                other.pump()
            }
            guard sent > 60_000 else { throw Failure("the raw sweep was not sent") }
        } else {
            try attack(serverPort: serverPort, sourcePort: sameAddress ? victim.port : 0)
        }
        var outcome = Outcome(
            victimClosed: nil, stepAtAttack: stepAtAttack, lastApplied: 0, spoofedFromSamePort: sameAddress)
        do {
            try pumpUntil { victim.lastApplied > stepAtAttack + 10 }
        } catch {
            outcome.victimClosed = victim.closed.map { "\($0)" } ?? "\(error)"
        }
        outcome.lastApplied = victim.lastApplied
        return outcome
    }

    static func runOnThread(serverPort: Int, sameAddress: Bool, raw: Bool = false) async throws -> Outcome {
        let result: Result<Outcome, any Error> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    returning: Result {
                        try run(serverPort: serverPort, sameAddress: sameAddress, raw: raw, limit: .seconds(30))
                    })
            }
            thread.start()
        }
        return try result.get()
    }

    /// From another port: the server has no session for the address and drops both as `unknown_peer`.
    @Test func aSpoofedDisconnectAndFarFutureInputFromAnotherPortChangeNothing() async throws {
        let fixture = try await ServerFixture.start()
        let port = try #require(fixture.server.addresses.udp?.port)
        let outcome = try await Self.runOnThread(serverPort: port, sameAddress: false)
        print("spoofing path: another source port on 127.0.0.1")
        #expect(outcome.victimClosed == nil)
        #expect(outcome.lastApplied > outcome.stepAtAttack, "inputs sent after the attack were applied")
        let stats = try await fixture.stats()
        #expect(stats.rejections(.unknownPeer) >= 2)
        // Nothing the spoofed packets said closed a session. A test process stalled for longer than the session
        // timeout (beside two spinning cores: 36 s once) loses its sessions to their own timers, which is no
        // attack's doing; every session closed must have timed out first.
        #expect(stats.sessionsClosed <= stats.sessionsTimedOut, "\(stats.sessionsClosed) closed")
        await fixture.stop()
    }

    /// From the victim's own address and port (`SO_REUSEPORT`): only the session trailer tells the server these are
    /// not the victim's; it drops them as `bad_mac`, and the victim's later inputs are applied.
    @Test func aSpoofedDisconnectAndFarFutureInputFromThePlayersOwnAddressChangeNothing() async throws {
        let fixture = try await ServerFixture.start()
        let port = try #require(fixture.server.addresses.udp?.port)
        let outcome = try await Self.runOnThread(serverPort: port, sameAddress: true)
        print("spoofing path: the victim's own address and port, via SO_REUSEPORT (no raw socket, uid \(geteuid()))")
        #expect(outcome.spoofedFromSamePort)
        #expect(outcome.victimClosed == nil)
        #expect(outcome.lastApplied > outcome.stepAtAttack, "inputs sent after the attack were applied")
        let stats = try await fixture.stats()
        #expect(stats.rejections(.badMAC) == 3)
        #expect(stats.rejections(.farFuture) == 0, "the forged number was never read")
        #expect(stats.sessionsClosed <= stats.sessionsTimedOut, "closed only by their own timers (a stalled test)")
        await fixture.stop()
    }

    /// The finding's blind sweep with forged sources (a raw socket needs root, so this runs only as root; the
    /// `SO_REUSEPORT` test above forges the victim's exact address for everyone): both players play on.
    @Test(.enabled(if: geteuid() == 0, "forging source addresses with a raw socket needs root"))
    func aBlindSweepOfSpoofedDisconnectsFromEveryPortEndsNoSession() async throws {
        let fixture = try await ServerFixture.start()
        let port = try #require(fixture.server.addresses.udp?.port)
        let outcome = try await Self.runOnThread(serverPort: port, sameAddress: true, raw: true)
        print("spoofing path: raw socket as root, 127.0.0.1 ports 1024-65535 swept")
        #expect(outcome.victimClosed == nil)
        #expect(outcome.lastApplied > outcome.stepAtAttack, "inputs sent after the sweep were applied")
        let stats = try await fixture.stats()
        // The server read the sweep (the kernel may drop part of a burst this size when the socket buffer fills):
        // at most the two players' own addresses held sessions, and what came from those failed the trailer.
        #expect(stats.rejections(.unknownPeer) + stats.rejections(.rateLimited) > 1_000)
        #expect(stats.rejections(.badMAC) <= 2)
        #expect(stats.sessionsClosed <= stats.sessionsTimedOut, "closed only by their own timers (a stalled test)")
        await fixture.stop()
    }

    /// Runs a thief's handshake with `token` from a fresh port: Hello, the Challenge's cookie, Hello again; returns
    /// the server's last answer.
    static func steal(serverPort: Int, token: UInt64, limit: Duration) throws -> Message {
        let fd = try socket(reusePort: false, port: 0)
        defer { close(fd) }
        var server = loopback(port: UInt16(serverPort))
        func send(_ hello: Hello) throws {
            let bytes = try Packet(.hello(hello)).encoded()
            let sent = bytes.withUnsafeBytes { raw in
                withUnsafePointer(to: &server) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            guard sent == bytes.count else { throw Failure("sendto: errno \(errno)") }
        }
        let deadline = ContinuousClock.now + limit
        func receive() throws -> Message {
            var buffer = [UInt8](repeating: 0, count: 2_048)
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while ContinuousClock.now < deadline {
                guard poll(&descriptor, 1, 50) > 0 else { continue }
                let size = recv(fd, &buffer, buffer.count, 0)
                if size > 0, let packet = try? Packet.decode(Array(buffer[0..<size])) { return packet.message }
            }
            throw Failure("no answer before the deadline")
        }
        var hello = Hello(game: .puck, seats: 2, resumeToken: token, name: "thief")
        try send(hello)
        guard case .challenge(let challenge) = try receive() else { throw Failure("expected a Challenge") }
        hello.cookie = challenge.cookie
        try send(hello)
        return try receive()
    }

    /// A stolen token over real sockets: the live seat is refused to the thief, and its owner, who holds the key,
    /// can still move to a new socket at once.
    @Test func aStolenTokenCannotTakeALiveSeatButItsOwnerCanMove() async throws {
        let fixture = try await ServerFixture.start()
        let port = try #require(fixture.server.addresses.udp?.port)
        let owner = try await fixture.client(.udp, game: .puck, seats: 2, name: "owner")
        let welcome = try await within(.seconds(20)) { try await connected(owner) }
        let answer: Result<Message, any Error> = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: Result {
                        try Self.steal(serverPort: port, token: welcome.resumeToken, limit: .seconds(20))
                    }
                )
            }.start()
        }
        #expect(try answer.get() == .reject(Reject(reason: .seatInUse, text: "this seat's player is still connected")))
        var stats = try await fixture.stats()
        #expect(stats.rejections(.seatInUse) == 1 && stats.resumes == 0 && stats.sessions == 1)
        // The owner drops its socket and resumes from a new one before the server notices: its Hello proves the key.
        owner.suspend()
        owner.resume()
        let resumed = try await within(.seconds(20)) {
            for await event in owner.events {
                switch event {
                case .stateChanged(.seated(let back)): return back
                case .stateChanged(.closed(let cause)): throw PlayError(text: "closed: \(cause)")
                default: continue
                }
            }
            throw PlayError(text: "event stream ended")
        }
        #expect(resumed.peer == welcome.peer && resumed.resumeToken != welcome.resumeToken)
        stats = try await fixture.stats()
        #expect(stats.resumes == 1 && stats.sessions == 1)
        await fixture.stop()
    }
}
