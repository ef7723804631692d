import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishServer

#if canImport(Glibc)
    import Glibc
#endif

/// Caps, timeouts and WebSocket framing rules on real loopback sockets (issue 19, items 4 and 5).
@Suite(.serialized) struct ConnectionLimitTests {
    static let hello = Packet(
        .hello(
            Hello(
                version: Hello.currentVersion, game: .snap, seats: 4, match: 0, cookie: .zero, resumeToken: 0,
                name: "raw")))

    /// Whether `bytes` hold a whole TCP frame whose packet is a Welcome.
    static func holdsWelcome(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        let length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        guard bytes.count >= 4 + length else { return false }
        let packet = bytes[4..<4 + length].withUnsafeBytes { try? Packet.decode($0, maxSize: WireLimits.maxFrame) }
        if case .welcome = packet?.message { return true }
        return false
    }

    @Test func halfSentFramesAndHeadsAndSilentConnectionsAreClosedAfterTheirTimeouts() async throws {
        let fixture = try await ServerFixture.start {
            $0.connections.frameTimeout = .seconds(1)
            // Below the 10 s a stream may take to say Hello, so the silent connection is closed as idle. The half
            // frame and half head are written on the loop as their connections come up: no stall of the test's thread
            // can let the idle timeout close them first (6 s was seen to pass between a connect and a write).
            $0.connections.idleTimeout = .seconds(6)
        }
        let tcpPort = try #require(fixture.server.addresses.tcp?.port)
        let httpPort = try #require(fixture.server.addresses.http?.port)
        // Timeouts run from each connection's last progress, so none can close within 1 s of this instant.
        let start = ContinuousClock.now
        // Half of a 64 KiB frame, then nothing.
        let sent: [UInt8] = [0, 1, 0, 0] + [UInt8](repeating: 0x53, count: 32 << 10)
        let halfFrame = try await RawStream.connect(port: tcpPort, group: fixture.group, sending: sent)
        // Half a request head, then nothing.
        let halfHead = try await RawStream.connect(
            port: httpPort, group: fixture.group, sending: Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8))
        // Nothing at all.
        let silent = try await RawStream.connect(port: tcpPort, group: fixture.group)
        // The guarantee is "closed, and not before its timeout"; 60 s leaves room for a busy machine.
        _ = try await halfFrame.readUntilClosed(within: .seconds(60))
        _ = try await halfHead.readUntilClosed(within: .seconds(60))
        _ = try await silent.readUntilClosed(within: .seconds(60))
        #expect(ContinuousClock.now - start >= .seconds(1))
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.frameTimeout) == 2)
        #expect(stats.rejections(.idleTimeout) == 1)
        // Stream bytes are counted as received, framing and all.
        #expect(stats.bytesReceived >= UInt64(sent.count))
    }

    /// After a large frame the decoder copies what follows into a small buffer: the next frame, split across
    /// writes, still arrives whole and in order.
    @Test func aFrameAfterALargeOneArrivesWhole() async throws {
        let fixture = try await ServerFixture.start()
        let stream = try await RawStream.connect(
            port: try #require(fixture.server.addresses.tcp?.port), group: fixture.group)
        let large = [0, 0, 0xEA, 0x60] + [UInt8](repeating: 0x47, count: 60_000) // a whole frame that is not a packet
        let hello = RawStream.frame(Self.hello)
        try await stream.write(large + hello[..<7])
        try await stream.write(Array(hello[7...]))
        _ = try await stream.read(within: .seconds(20), until: Self.holdsWelcome)
        let stats = try await fixture.stats()
        await stream.close()
        await fixture.stop()
        #expect(stats.rejections(.badMagic) == 1, "the large frame is counted and skipped, the stream stays in step")
        #expect(stats.sessionsOpened == 1)
    }

    @Test(arguments: [(total: 3, perHost: 100), (total: 100, perHost: 3)])
    func connectionsBeyondTheCapAreRefusedWhileExistingOnesKeepWorking(total: Int, perHost: Int) async throws {
        let fixture = try await ServerFixture.start {
            $0.connections.maxConnections = total
            $0.connections.maxConnectionsPerHost = perHost
        }
        let port = try #require(fixture.server.addresses.tcp?.port)
        var players: [RawStream] = []
        for _ in 0..<3 {
            let player = try await RawStream.connect(port: port, group: fixture.group)
            try await player.write(RawStream.frame(Self.hello))
            _ = try await player.read(within: .seconds(20), until: Self.holdsWelcome)
            players.append(player)
        }
        let refused = try await RawStream.connect(port: port, group: fixture.group)
        try? await refused.write(RawStream.frame(Self.hello))
        let answer = try await refused.readUntilClosed(within: .seconds(20))
        #expect(answer.isEmpty, "a refused connection is closed without a word")
        // The three admitted players still play: each Ping is answered with a Pong.
        for player in players {
            player.clear()
            try await player.write(RawStream.frame(Packet(.ping(Ping(player: 0, count: 1, sendTime: 0)))))
            let reply = try await player.read(within: .seconds(20)) { $0.count >= 4 }
            #expect(!reply.isEmpty)
        }
        let stats = try await fixture.stats()
        #expect(stats.rejections(total == 3 ? .tooManyConnections : .hostConnectionsFull) == 1)
        #expect(stats.sessions == 3)
        // A closed connection frees its place.
        await players[0].close()
        // Until the server has seen the close, a new connection is still refused (and its write may fail).
        try await eventually(within: .seconds(20)) { await Self.newPlayerIsWelcomed(port: port, fixture: fixture) }
        for player in players { await player.close() }
        await fixture.stop()
    }

    /// Whether a new TCP player on `port` gets its Welcome (within 5 s); the connection is closed again.
    static func newPlayerIsWelcomed(port: Int, fixture: ServerFixture) async -> Bool {
        guard let next = try? await RawStream.connect(port: port, group: fixture.group) else { return false }
        try? await next.write(RawStream.frame(Self.hello))
        let reply = try? await next.read(within: .seconds(5), until: Self.holdsWelcome)
        await next.close()
        return reply.map(Self.holdsWelcome) ?? false
    }

    /// Upgrades a raw connection to a WebSocket and returns it.
    static func webSocket(_ fixture: ServerFixture) async throws -> RawStream {
        let stream = try await RawStream.connect(
            port: try #require(fixture.server.addresses.http?.port), group: fixture.group)
        try await stream.write(RawStream.webSocketUpgrade)
        let response = try await stream.read(within: .seconds(20), until: RawStream.upgraded)
        #expect(String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
        stream.clear()
        return stream
    }

    /// RFC 6455 §5.5.1: a close frame from the server (unmasked) carrying `code`.
    static func closeFrame(_ code: UInt16) -> [UInt8] { [0x88, 0x02, UInt8(code >> 8), UInt8(code & 0xFF)] }

    @Test func aWebSocketTextFrameIsClosedWith1003AndCountedAsText() async throws {
        let fixture = try await ServerFixture.start()
        let stream = try await Self.webSocket(fixture)
        try await stream.write(RawStream.webSocketFrame(opcode: 0x1, payload: Array("hello".utf8)))
        let reply = try await stream.readUntilClosed(within: .seconds(20))
        #expect(reply == Self.closeFrame(1003))
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.textFrame) == 1)
        #expect(stats.rejections(.oversizeFrame) == 0)
    }

    @Test func anUnmaskedClientFrameIsClosedWith1002() async throws {
        let fixture = try await ServerFixture.start()
        let stream = try await Self.webSocket(fixture)
        try await stream.write(RawStream.webSocketFrame(opcode: 0x2, payload: encode(Self.hello), masked: false))
        let reply = try await stream.readUntilClosed(within: .seconds(20))
        #expect(reply == Self.closeFrame(1002))
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.unmaskedFrame) == 1)
        #expect(stats.sessionsOpened == 0, "the unmasked Hello was not acted on")
    }

    @Test func aFragmentedMessageIsReassembledAndEveryByteCounted() async throws {
        let fixture = try await ServerFixture.start()
        let stream = try await Self.webSocket(fixture)
        let hello = encode(Self.hello)
        let cut = hello.count / 2
        let frames =
            RawStream.webSocketFrame(opcode: 0x2, fin: false, payload: Array(hello[..<cut]))
            // A control frame may arrive between the fragments of a message (RFC 6455 §5.4).
            + RawStream.webSocketFrame(opcode: 0x9, payload: [1, 2, 3])
            + RawStream.webSocketFrame(opcode: 0x0, payload: Array(hello[cut...]))
        try await stream.write(frames)
        // The Pong for the ping, then the Welcome as one binary frame.
        let reply = try await stream.read(within: .seconds(20)) { bytes in bytes.contains(0x82) }
        #expect(reply.starts(with: [0x8A, 0x03, 1, 2, 3]), "the ping is answered")
        try await eventually(within: .seconds(20)) { try await fixture.stats().sessionsOpened == 1 }
        let stats = try await fixture.stats()
        #expect(stats.rejections(.badFrame) == 0)
        // The frames, framing included; the upgrade request is HTTP, not game traffic.
        #expect(stats.bytesReceived == UInt64(frames.count))
        // A continuation with no message to continue is a protocol error.
        try await stream.write(RawStream.webSocketFrame(opcode: 0x0, payload: [1]))
        let closing = try await stream.readUntilClosed(within: .seconds(20))
        #expect(closing.suffix(4).elementsEqual(Self.closeFrame(1002)))
        #expect(try await fixture.stats().rejections(.badFrame) == 1)
        await fixture.stop()
    }

    /// A message trickled one small fragment at a time makes progress frame by frame, but must still complete
    /// within one frame timeout of its first byte, or it could hold its buffer for ever.
    @Test func aMessageTrickledInFragmentsIsClosedAtTheFrameTimeout() async throws {
        let fixture = try await ServerFixture.start {
            $0.connections.frameTimeout = .seconds(1)
            $0.connections.idleTimeout = .seconds(60)
        }
        let stream = try await Self.webSocket(fixture)
        try await stream.write(RawStream.webSocketFrame(opcode: 0x2, fin: false, payload: [0x53]))
        // One more byte of the message every 200 ms (the pacing of the attack, not a wait for the server).
        let trickle = Task {
            for _ in 0..<100 {
                try await Task.sleep(for: .milliseconds(200))
                try await stream.write(RawStream.webSocketFrame(opcode: 0x0, fin: false, payload: [0x4E]))
            }
        }
        _ = try await stream.readUntilClosed(within: .seconds(20))
        trickle.cancel()
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.frameTimeout) == 1)
        #expect(stats.rejections(.idleTimeout) == 0)
    }

    @Test func aFragmentedMessageAboveTheLimitIsClosedWith1009() async throws {
        let fixture = try await ServerFixture.start()
        let stream = try await Self.webSocket(fixture)
        // 40,000 + 30,000 bytes: each frame is within the limit, the message is not.
        try await stream.write(
            RawStream.webSocketFrame(opcode: 0x2, fin: false, payload: [UInt8](repeating: 1, count: 40_000))
                + RawStream.webSocketFrame(opcode: 0x0, payload: [UInt8](repeating: 2, count: 30_000)))
        let reply = try await stream.readUntilClosed(within: .seconds(20))
        #expect(reply == Self.closeFrame(1009))
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.oversizeFrame) == 1)
    }

    /// One frame just above the limit (which NIO's frame decoder, allowing header slack, lets through) is a message
    /// above 65,536 bytes too: 1009, not a packet that fails to decode on a connection left open.
    @Test func aSingleFrameJustAboveTheLimitIsClosedWith1009() async throws {
        let fixture = try await ServerFixture.start()
        let stream = try await Self.webSocket(fixture)
        try await stream.write(RawStream.webSocketFrame(opcode: 0x2, payload: [UInt8](repeating: 1, count: 65_537)))
        let reply = try await stream.readUntilClosed(within: .seconds(20))
        #expect(reply == Self.closeFrame(1009))
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.oversizeFrame) == 1)
    }

    /// RFC 6455 §5.5: a control frame above 125 bytes is a protocol error (1002), even one that also claims more
    /// than the message limit (NIO's decoder alone answers that with 1009 before it looks at the opcode).
    @Test(arguments: [200, 100_000]) func anOversizeControlFrameIsClosedWith1002(length: Int) async throws {
        let fixture = try await ServerFixture.start()
        let stream = try await Self.webSocket(fixture)
        // A masked ping's header with a 64-bit length and its mask; no payload follows.
        let header: [UInt8] =
            [0x89, 0x80 | 127] + (0..<8).reversed().map { UInt8(length >> ($0 * 8) & 0xFF) } + [1, 2, 3, 4]
        try await stream.write(header)
        let reply = try await stream.readUntilClosed(within: .seconds(20))
        #expect(reply == Self.closeFrame(1002))
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.badFrame) == 1)
        #expect(stats.rejections(.oversizeFrame) == 0)
    }

    /// A connection reset before it sent a byte refused no frame: nothing is counted as one.
    @Test func aResetConnectionIsNotCountedAsAnOversizeFrame() async throws {
        let fixture = try await ServerFixture.start { $0.connections.maxConnections = 1 }
        let port = try #require(fixture.server.addresses.tcp?.port)
        try Self.connectAndReset(port: port)
        // The only place is free again once the server has seen the reset: a player then gets its Welcome.
        try await eventually(within: .seconds(20)) { await Self.newPlayerIsWelcomed(port: port, fixture: fixture) }
        let stats = try await fixture.stats()
        await fixture.stop()
        #expect(stats.rejections(.oversizeFrame) == 0)
        #expect(stats.rejections(.badFrame) == 0)
    }

    /// Connects a plain socket to `port` on 127.0.0.1 and closes it with `SO_LINGER` 0, which sends a reset.
    static func connectAndReset(port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw IOError(errnoCode: errno, reason: "connect") }
        var hard = linger(l_onoff: 1, l_linger: 0)
        guard setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, socklen_t(MemoryLayout<linger>.size)) == 0 else {
            throw IOError(errnoCode: errno, reason: "setsockopt(SO_LINGER)")
        }
    }

    @Test func manySocketsOnOneAddressAreLimitedTogether() async throws {
        let rate = 200.0
        let fixture = try await ServerFixture.start { $0.hostLimits.packetsPerHost = rate }
        let port = try #require(fixture.server.addresses.udp?.port)
        let server = try SocketAddress(ipAddress: "127.0.0.1", port: port)
        var sockets: [any Channel] = []
        for _ in 0..<20 {
            sockets.append(try await DatagramBootstrap(group: fixture.group).bind(host: "127.0.0.1", port: 0).get())
        }
        let drops = UDPKernelCounters.receiveBufferErrors()
        let start = ContinuousClock.now
        for round in 0..<50 {
            for socket in sockets {
                let datagram = AddressedEnvelope(remoteAddress: server, data: ByteBuffer(bytes: [UInt8(round)]))
                try await socket.writeAndFlush(datagram)
            }
        }
        let sending = ContinuousClock.now - start
        // Every datagram is accounted for, as too short (admitted and refused by the decoder) or rate limited.
        try await eventually(within: .seconds(20)) {
            let stats = try await fixture.stats()
            let counted =
                stats.rejections(.tooShort) + stats.rejections(.rateLimited)
                + stats.rejections(.hostRateLimited)
            return counted + (UDPKernelCounters.receiveBufferErrors() - drops) >= 1_000
        }
        let stats = try await fixture.stats()
        for socket in sockets { try? await socket.close() }
        await fixture.stop()
        // No port sent more than 50: only the host's limit can refuse them. A sliding second admits at most twice
        // the rate, so over the time the sending took the host got at most rate × (seconds + 2) through.
        let seconds = Double(sending.components.seconds) + Double(sending.components.attoseconds) / 1e18
        #expect(stats.rejections(.rateLimited) == 0)
        #expect(Double(stats.rejections(.tooShort)) <= rate * (seconds + 2), "sending took \(sending)")
        #expect(stats.rejections(.hostRateLimited) > 0)
    }
}
