import Foundation
import SkirmishWire
import Synchronization
import Testing

@testable import SkirmishServer

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 19's limiter finding over real sockets: 70,000 one-byte datagrams from forged sources all over 127.0.0.0/8
/// filled the old rate-limiter table, and 14 of 16 new players then got no answer. The server now counts rates in a
/// sketch that keeps no per-source entry, so the flood cannot push anyone out. Forging sources takes a raw socket,
/// hence root (CI runs as root; the core-harness test of the same finding runs everywhere).
@Suite(.serialized) struct SpoofedFloodTests {
    /// A one-byte UDP datagram to `serverPort` on 127.0.0.1 with its IP header, for a raw socket: the source address
    /// (bytes 12–15) and port (20–21) are the forger's to fill in.
    static func forgedDatagram(to serverPort: Int) -> [UInt8] {
        var datagram = [UInt8](repeating: 0, count: 20 + 8 + 1)
        datagram[0] = 0x45
        datagram[3] = UInt8(datagram.count)
        datagram[8] = 64
        datagram[9] = UInt8(IPPROTO_UDP)
        datagram.replaceSubrange(16..<20, with: [127, 0, 0, 1])
        datagram[22] = UInt8(serverPort >> 8)
        datagram[23] = UInt8(serverPort & 0xFF)
        datagram[25] = 9
        datagram[28] = 0x53
        return datagram
    }

    /// Sends `count` one-byte UDP datagrams to the server from forged sources: random addresses in 127.0.0.0/8
    /// (never 127.0.0.1, the honest players' host) and random ports. Returns how many the kernel took.
    static func flood(serverPort: Int, count: Int, seed: UInt64) throws -> Int {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_RAW))
        guard fd >= 0 else { throw SpoofingLoopbackTests.Failure("raw socket: errno \(errno)") }
        defer { close(fd) }
        var datagram = Self.forgedDatagram(to: serverPort)
        var server = SpoofingLoopbackTests.loopback(port: UInt16(serverPort))
        var random = SeededRandom(seed: seed)
        var sent = 0
        for _ in 0..<count {
            let bits = random.next()
            // 127.b.c.d with (b, c, d) never (0, 0, 1).
            let b = UInt8(truncatingIfNeeded: bits >> 8) | 0x01
            datagram.replaceSubrange(
                12..<16, with: [127, b, UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 24)])
            let port = 1_024 + Int(bits >> 40) % 64_000
            datagram[20] = UInt8(port >> 8)
            datagram[21] = UInt8(port & 0xFF)
            if SpoofingLoopbackTests.sendRaw(fd, datagram, to: &server) { sent += 1 }
        }
        return sent
    }

    /// How a new player's handshake ended.
    enum Join: Hashable, CustomStringConvertible {
        case welcomed
        /// The server refused the player.
        case refused(Reject)
        /// Before its Welcome a new address is sent a Challenge, a Welcome or a Reject; anything else is a server bug.
        case unexpected(MessageType)
        /// No Welcome before the deadline.
        case unanswered

        var description: String {
            switch self {
            case .welcomed: "welcomed"
            case .refused(let reject): "refused (\(reject.reason): \(reject.text))"
            case .unexpected(let type): "sent \(type) before any Welcome"
            case .unanswered: "unanswered"
            }
        }
    }

    /// A new player's UDP socket: a free port, connected to the server as a real client's is, so the kernel gives it
    /// the server's datagrams only, not whatever else on the machine is sent to that port.
    static func playerSocket(serverPort: Int) throws -> Int32 {
        let fd = try SpoofingLoopbackTests.socket(reusePort: false, port: 0)
        try SpoofingLoopbackTests.attach(fd, port: UInt16(serverPort), "connect", Glibc.connect)
        return fd
    }

    /// A new player's handshake on `fd` (Hello, the Challenge's cookie, Hello again, each resent every 500 ms until
    /// answered), and how it ended by `limit`. The Welcome carries the new session's trailer, so only its header is
    /// read.
    static func join(on fd: Int32, limit: Duration) throws -> Join {
        func send(_ hello: Hello) throws {
            let bytes = try Packet(.hello(hello)).encoded()
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
            guard sent == bytes.count else { throw SpoofingLoopbackTests.Failure("send: errno \(errno)") }
        }
        let deadline = ContinuousClock.now + limit
        var hello = Hello(game: .puck, seats: 2, name: "newcomer")
        try send(hello)
        var buffer = [UInt8](repeating: 0, count: 2_048)
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        // As a real client does, the Hello goes again every 500 ms until answered: a burst can fill the server's
        // socket buffer, and the kernel then drops what arrives, honest or not.
        var resendAt = ContinuousClock.now + .milliseconds(500)
        while ContinuousClock.now < deadline {
            if ContinuousClock.now >= resendAt {
                try send(hello)
                resendAt = ContinuousClock.now + .milliseconds(500)
            }
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let size = recv(fd, &buffer, buffer.count, 0)
            guard size >= PacketHeader.size else { continue }
            let header = try buffer.withUnsafeBytes {
                try PacketHeader.peek(UnsafeRawBufferPointer(rebasing: $0[0..<size]))
            }
            switch header.type {
            case .challenge:
                guard case .challenge(let challenge) = try Packet.decode(Array(buffer[0..<size])).message else {
                    continue
                }
                hello.cookie = challenge.cookie
                try send(hello)
                resendAt = ContinuousClock.now + .milliseconds(500)
            case .welcome:
                return .welcomed
            case .reject:
                // A Reject that does not decode is reported as what it claimed to be, not thrown past the report.
                guard case .reject(let reject) = try? Packet.decode(Array(buffer[0..<size])).message else {
                    return .unexpected(header.type)
                }
                return .refused(reject)
            default:
                return .unexpected(header.type)
            }
        }
        return .unanswered
    }

    @Test(.enabled(if: geteuid() == 0, "forging source addresses with a raw socket needs root"))
    func seventyThousandForgedSourcesDoNotStopSixteenNewPlayers() async throws {
        // The server as `skirmish serve` runs it: the standard limits per host and prefix.
        let fixture = try await ServerFixture.start { $0.hostLimits = .standard }
        let port = try #require(fixture.server.addresses.udp?.port)
        let answers: Result<(sent: Int, joins: [Join]), any Error> = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: Result {
                        let sent = try Self.flood(serverPort: port, count: 70_000, seed: 19)
                        // Every player keeps its socket until all have joined, so each has a port no other took
                        // before it: a port the kernel handed out again would be an earlier player's address, whose
                        // Hello the server rightly ignores as that player's resend and whose snapshots it sends there.
                        var sockets: [Int32] = []
                        defer { for fd in sockets { close(fd) } }
                        var joins: [Join] = []
                        for _ in 0..<16 {
                            let fd = try Self.playerSocket(serverPort: port)
                            sockets.append(fd)
                            // A deadline generous for a busy machine, not a speed.
                            joins.append(try Self.join(on: fd, limit: .seconds(15)))
                        }
                        return (sent, joins)
                    })
            }.start()
        }
        let (sent, joins) = try answers.get()
        print("spoofing path: raw socket as root, \(sent) forged one-byte datagrams from 127.0.0.0/8")
        #expect(sent > 60_000)
        let welcomes = joins.filter { $0 == .welcomed }.count
        #expect(welcomes == 16, "\(welcomes) of 16 new players were seated after the flood: \(joins)")
        let stats = try await fixture.stats()
        // The server read the flood (the kernel may drop part of a burst this size) and refused it as garbage.
        #expect(stats.rejected.reduce(0, +) > 1_000)
        #expect(stats.sessionsOpened == 16)
        await fixture.stop()
    }

    /// A flood running on its own thread: told to stop, it reports how many datagrams it sent.
    final class Flood: Sendable {
        let stopped = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Int, any Error>>(.success(0))
    }

    /// Forges one-byte datagrams to the server from the honest players' own host (127.0.0.1, random ports) and the
    /// rest of its /24, `perSecond` of them, until `stop` is set; returns how many the kernel took. Paced in batches
    /// every millisecond (the attack's rate, not a wait for the server), so that a debug build reads them all and the
    /// kernel drops none of the players' datagrams.
    static func floodHost(serverPort: Int, perSecond: Int, until flood: Flood) throws -> Int {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_RAW))
        guard fd >= 0 else { throw SpoofingLoopbackTests.Failure("raw socket: errno \(errno)") }
        defer { close(fd) }
        var datagram = Self.forgedDatagram(to: serverPort)
        var server = SpoofingLoopbackTests.loopback(port: UInt16(serverPort))
        var random = SeededRandom(seed: 24)
        var sent = 0
        var due = ContinuousClock.now
        while !flood.stopped.load(ordering: .relaxed) {
            for _ in 0..<max(1, perSecond / 1_000) {
                let bits = random.next()
                // Half from 127.0.0.1 itself, half from 127.0.0.2–254.
                let host = bits & 1 == 0 ? 1 : 2 + UInt8(truncatingIfNeeded: bits >> 8) % 253
                datagram.replaceSubrange(12..<16, with: [127, 0, 0, host])
                let port = 1_024 + Int(bits >> 40) % 64_000
                datagram[20] = UInt8(port >> 8)
                datagram[21] = UInt8(port & 0xFF)
                if SpoofingLoopbackTests.sendRaw(fd, datagram, to: &server) { sent += 1 }
            }
            due = due + .milliseconds(1)
            let ahead = due - ContinuousClock.now
            if ahead > .zero { Thread.sleep(forTimeInterval: Double(ahead.components.attoseconds) / 1e18) }
        }
        return sent
    }

    /// Issue 24, item 6: a flood forged from a host's address and its /24 uses up their unverified budgets, and new
    /// players of that host are still seated, every one: the first Hello only asks for a Challenge and is charged to
    /// its own port, and the second proves the address with its cookie.
    @Test(.enabled(if: geteuid() == 0, "forging source addresses with a raw socket needs root"))
    func newPlayersOfAHostUnderAForgedFloodAreSeated() async throws {
        let fixture = try await ServerFixture.start {
            $0.hostLimits = .standard
            // Budgets that a paced flood, which a debug build reads in full, overruns 200- and 100-fold: before the
            // fix a Hello got through by luck, and 6 of 8 players were seated within 15 s (a reference client gives up
            // after 5 s).
            $0.hostLimits.packetsPerHost = 10
            $0.hostLimits.packetsPerPrefix = 40
        }
        let port = try #require(fixture.server.addresses.udp?.port)
        let flood = Flood()
        Thread {
            let result = Result { try Self.floodHost(serverPort: port, perSecond: 4_000, until: flood) }
            flood.result.withLock { $0 = result }
            flood.done.signal()
        }.start()
        // The players come once the flood holds both budgets.
        let held: Result<Void, any Error>
        do {
            try await eventually(within: .seconds(20)) {
                let stats = try await fixture.stats()
                return stats.rejections(.hostRateLimited) > 0 && stats.rejections(.prefixRateLimited) > 0
            }
            held = .success(())
        } catch {
            held = .failure(error)
        }
        let answers: Result<(sent: Int, joins: [Join]), any Error> = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: Result {
                        defer { flood.stopped.store(true, ordering: .relaxed) }
                        try held.get()
                        var sockets: [Int32] = []
                        defer { for fd in sockets { close(fd) } }
                        var joins: [Join] = []
                        for _ in 0..<10 {
                            let fd = try Self.playerSocket(serverPort: port)
                            sockets.append(fd)
                            // The reference client's own patience: it gives up after 5 s without a Welcome.
                            joins.append(try Self.join(on: fd, limit: .seconds(5)))
                        }
                        flood.stopped.store(true, ordering: .relaxed)
                        guard flood.done.wait(timeout: .now() + 30) == .success else {
                            throw SpoofingLoopbackTests.Failure("the flood did not stop")
                        }
                        return (try flood.result.withLock { try $0.get() }, joins)
                    })
            }.start()
        }
        let (sent, joins) = try answers.get()
        print("forged flood on the players' /24: \(sent) datagrams at 4,000/s")
        let welcomes = joins.filter { $0 == .welcomed }.count
        #expect(welcomes == 10, "\(welcomes) of 10 new players of the flooded host were seated: \(joins)")
        let stats = try await fixture.stats()
        #expect(stats.sessionsOpened == 10)
        await fixture.stop()
    }
}
