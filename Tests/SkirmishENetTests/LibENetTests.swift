import Foundation
import SkirmishNet
import SkirmishTestSupport
import SkirmishWire
import Testing

@testable import SkirmishENet

#if canImport(Glibc)
    import Glibc
#endif

/// The plug-in against the real libenet 1.3.17 (Debian's libenet-dev): a C server built by the test run, driven over
/// loopback UDP by ``UDPDriver``. Every wait is on an event with a generous deadline (the machine is a busy 2-core
/// one), never a sleep; conditions are exact.
@Suite(.serialized, .ownThread) struct LibENetTests {
    typealias Configuration = ENetConnection<ENetRawCodec>.Configuration

    /// A connection to a fresh libenet server.
    static func session(
        _ peer: LibENetPeer, _ configuration: Configuration = Configuration(), loss: Double = 0, seed: UInt64 = 1
    ) throws -> UDPDriver<ENetRawCodec> {
        var driver = try UDPDriver(port: peer.port, configuration: configuration, loss: loss, seed: seed)
        peer.drain()
        let connects = peer.lines.filter { $0.hasPrefix("connect ") }.count
        driver.start()
        // Connected on both sides: the verify-connect here, and libenet's connect event there (after this side's
        // acknowledgement arrives; until then libenet neither takes data from this peer nor sends it any).
        let connected = driver.run(within: .seconds(30), peer: peer) { driver in
            driver.harness.established != nil && peer.lines.filter { $0.hasPrefix("connect ") }.count > connects
        }
        try #require(connected, "no connection: \(String(describing: driver.harness.closed)), \(peer.lines)")
        return driver
    }

    /// A numbered payload: the number, then filler.
    static func numbered(_ number: Int, size: Int = 16) -> [UInt8] {
        [UInt8(number >> 8), UInt8(number & 0xFF)] + [UInt8](repeating: UInt8(number % 251), count: size - 2)
    }

    /// libenet's own connect request, captured on a socket, is byte for byte the plug-in's, but for the two fields
    /// each side picks: the sent time (a clock reading) and the connect id (random).
    @Test func connectRequestMatchesLibENet() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(socket >= 0)
        defer { Glibc.close(socket) }
        let port = try #require(LoopbackPort.bind(socket))
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        let client = try LibENetPeer(["--capture", String(port)], server: false)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var received = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while received <= 0, ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 100)
            received = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        }
        _ = client
        let libenet = Array(buffer[0..<max(received, 0)])
        var configuration = Configuration()
        configuration.connectData = 0x0102_0304
        var harness = Harness(configuration)
        let ours = try #require(harness.start().first)
        #expect(libenet.count == ours.count)
        var masked = (libenet, ours)
        for index in [2, 3, 44, 45, 46, 47] where index < min(libenet.count, ours.count) {
            masked.0[index] = 0
            masked.1[index] = 0
        }
        #expect(masked.0 == masked.1)
    }

    /// Reliable, unreliable and unsequenced packets echo back; the plug-in's counts by channel and delivery equal
    /// the server's own, both ways, and the server's throttle configuration reached the plug-in.
    @Test func echoAndCountsAgree() throws {
        let peer = try LibENetPeer([])
        var configuration = Configuration()
        configuration.channelCount = 3
        var driver = try Self.session(peer, configuration)
        defer { driver.closeSocket() }
        let count = 50
        for number in 0..<count {
            driver.send(packet(0, .reliable, Self.numbered(number)))
            driver.send(packet(1, .unreliable, Self.numbered(number)))
            driver.send(packet(2, .unsequenced, Self.numbered(number)))
        }
        let echoed = driver.run(within: .seconds(30), peer: peer) { $0.harness.messages.count == 3 * count }
        #expect(echoed, "\(driver.harness.messages.count) of \(3 * count) echoes")
        let reliable = driver.harness.messages.filter { $0.channel == 0 }
        #expect(reliable == (0..<count).map { packet(0, .reliable, Self.numbered($0)) })
        #expect(driver.harness.messages.filter { $0.channel == 1 }.allSatisfy { $0.delivery == .unreliable })
        #expect(driver.harness.messages.filter { $0.channel == 2 }.allSatisfy { $0.delivery == .unsequenced })
        let stats = try peer.stats()
        let sent = driver.harness.counts(sent: true)
        let received = driver.harness.counts(sent: false)
        for kind in ["reliable/ch0", "unreliable/ch1", "unsequenced/ch2"] {
            #expect(stats["received"]?[kind] == count, "\(kind)")
            #expect(sent[kind]?.packets == stats["received"]?[kind], "\(kind) sent")
            #expect(received[kind]?.packets == stats["sent"]?[kind], "\(kind) received")
        }
        // At least once: libenet resends it when this side's acknowledgement is slow, and each copy is applied.
        #expect(driver.harness.events(.throttleConfigured) >= 1)
        #expect(driver.harness.events(.unreliableThrottled) == 0)
        #expect(driver.harness.errors.isEmpty, "\(driver.harness.errors)")
        let samples = driver.harness.metrics.compactMap { if case .roundTrip(let time) = $0 { time } else { nil } }
        #expect(!samples.isEmpty && samples.allSatisfy { $0 >= .milliseconds(1) })
    }

    /// Under 10 % emulated loss each way, every reliable payload arrives at the server and back exactly once and in
    /// order.
    @Test func reliableUnderLoss() throws {
        let peer = try LibENetPeer([])
        var driver = try Self.session(peer, loss: 0.1, seed: 11)
        defer { driver.closeSocket() }
        let count = 200
        for number in 0..<count { driver.send(packet(0, .reliable, Self.numbered(number))) }
        let done = driver.run(within: .seconds(90), peer: peer) { $0.harness.messages.count >= count }
        #expect(done, "\(driver.harness.messages.count) of \(count)")
        #expect(driver.harness.messages == (0..<count).map { packet(0, .reliable, Self.numbered($0)) })
        #expect(try peer.stats()["received"]?["reliable/ch0"] == count)
        #expect(driver.dropped > 0)
        #expect(driver.harness.metrics.contains { if case .resent = $0 { true } else { false } })
        #expect(driver.harness.closed == nil)
    }

    /// 4 KiB packets fragment and reassemble both ways: reliable fragments, and unreliable ones when configured
    /// (libenet echoes them with ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT).
    @Test func fragmentsBothWays() throws {
        let peer = try LibENetPeer([])
        var configuration = Configuration()
        configuration.unreliableFragments = true
        var driver = try Self.session(peer, configuration)
        defer { driver.closeSocket() }
        let big = (0..<4096).map { UInt8(($0 * 13) % 256) }
        driver.send(packet(0, .reliable, big))
        driver.send(packet(1, .unreliable, big))
        let done = driver.run(within: .seconds(30), peer: peer) { $0.harness.messages.count == 2 }
        #expect(done)
        #expect(Set(driver.harness.messages.map { [$0.channel] + $0.bytes }) == [[0] + big, [1] + big])
        #expect(driver.harness.messages.first { $0.channel == 1 }?.delivery == .unreliable)
        let stats = try peer.stats()
        #expect(stats["receivedBytes"]?["reliable/ch0"] == 4096 && stats["receivedBytes"]?["unreliable/ch1"] == 4096)
        #expect(driver.harness.events(.fragmentsSent) == 6 && driver.harness.events(.fragmentsReceived) == 6)
        // And server-first: libenet cuts 4 KiB for the plug-in to reassemble.
        peer.command("send 1 r 4096 2")
        let more = driver.run(within: .seconds(30), peer: peer) { $0.harness.messages.count == 4 }
        #expect(
            more
                && driver.harness.messages.suffix(2).allSatisfy {
                    $0.bytes.count == 4096 && $0.bytes[0] == UInt8(ascii: "P")
                })
    }

    /// A 30 Hz unreliable state broadcast and reliable events on another channel: every event arrives in order,
    /// states never go backwards, and the plug-in counts what the server says it sent.
    @Test func broadcastStateAndEvents() throws {
        let peer = try LibENetPeer([])
        var driver = try Self.session(peer)
        defer { driver.closeSocket() }
        peer.command("broadcast 2")
        let finished = driver.run(within: .seconds(30), peer: peer) { _ in peer.lines.contains("broadcast done") }
        #expect(finished)
        let sent = try peer.stats()["sent"] ?? [:]
        let events = try #require(sent["reliable/ch0"])
        let states = try #require(sent["unreliable/ch1"])
        #expect(events >= 1 && states >= 10 * events)
        let arrived = driver.run(within: .seconds(30), peer: peer) { driver in
            driver.harness.messages.filter { $0.channel == 0 }.count == events
                && driver.harness.messages.filter { $0.channel == 1 }.count == states
        }
        #expect(arrived, "\(driver.harness.counts(sent: false)) of \(sent)")
        let numbers = driver.harness.messages.filter { $0.channel == 0 }.map { UInt32($0.bytes[1]) }
        #expect(numbers == Array(1...UInt32(events)))
        let ticks = driver.harness.messages.filter { $0.channel == 1 }.map {
            UInt32($0.bytes[1]) | UInt32($0.bytes[2]) << 8 | UInt32($0.bytes[3]) << 16 | UInt32($0.bytes[4]) << 24
        }
        #expect(ticks == ticks.sorted())
        #expect(driver.harness.counts(sent: false)["unreliable/ch1"]?.packets == states)
    }

    /// Packets whose first byte is `R` are relayed by the server to the other peers.
    @Test func relayBetweenPeers() throws {
        let peer = try LibENetPeer([])
        var first = try Self.session(peer, seed: 1)
        var second = try Self.session(peer, seed: 2)
        defer {
            first.closeSocket()
            second.closeSocket()
        }
        first.send(packet(0, .reliable, Array("Rhello".utf8)))
        _ = first.run(within: .milliseconds(100), peer: peer) { _ in false }
        let relayed = second.run(within: .seconds(30), peer: peer) { !$0.harness.messages.isEmpty }
        #expect(relayed && second.harness.messages == [packet(0, .reliable, Array("Rhello".utf8))])
        #expect(first.harness.messages.isEmpty)
    }

    /// The server disconnects the peer with data: it reaches the agent in the close reason.
    @Test func serverDisconnectWithData() throws {
        let peer = try LibENetPeer([])
        var driver = try Self.session(peer)
        defer { driver.closeSocket() }
        peer.command("kick 4242")
        #expect(driver.run(within: .seconds(30), peer: peer) { $0.harness.closed != nil })
        let reason = try #require(driver.harness.closed)
        #expect(reason.kind == "closed_by_server" && reason.code == 4242)
        // The acknowledgement went out, so libenet reports the disconnect at once, not after its timeout.
        #expect(peer.waitForLine(within: .seconds(20)) { $0.hasPrefix("disconnect ") } != nil)
    }

    /// This side disconnects with data: the server's event carries it, and the acknowledgement ends the connection.
    @Test func clientDisconnectWithData() throws {
        let peer = try LibENetPeer([])
        var driver = try Self.session(peer)
        defer { driver.closeSocket() }
        driver.disconnect(data: 99)
        #expect(driver.run(within: .seconds(30), peer: peer) { $0.harness.closed != nil })
        #expect(driver.harness.closed?.kind == "local" && driver.harness.closed?.code == 99)
        let line = peer.waitForLine(within: .seconds(20)) { $0.hasPrefix("disconnect ") }
        #expect(line?.hasSuffix(" 99") == true)
    }

    /// Checksums: on at both ends, the connection works; on at one end only, it fails with a message that says so.
    @Test(arguments: [(true, true), (true, false), (false, true)])
    func checksums(server: Bool, client: Bool) throws {
        let peer = try LibENetPeer(server ? ["--checksum"] : [])
        var configuration = Configuration()
        configuration.checksum = client
        configuration.timeoutMaximum = .seconds(3)
        var driver = try UDPDriver(port: peer.port, configuration: configuration)
        defer { driver.closeSocket() }
        driver.start()
        let ended = driver.run(within: .seconds(30), peer: peer) {
            $0.harness.established != nil || $0.harness.closed != nil
        }
        #expect(ended)
        if server == client {
            #expect(driver.harness.established != nil)
            driver.send(packet(0, .reliable, [1, 2, 3]))
            #expect(driver.run(within: .seconds(20), peer: peer) { !$0.harness.messages.isEmpty })
        } else {
            let reason = try #require(driver.harness.closed)
            #expect(["handshake_timeout", "checksum_mismatch"].contains(reason.kind))
            #expect(reason.detail.contains("checksum"))
            #expect(driver.harness.established == nil)
        }
    }
}
