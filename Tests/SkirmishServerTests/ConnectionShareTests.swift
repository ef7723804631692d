import NIOCore
import NIOPosix
import SkirmishNet
import SkirmishWire
import Testing

@testable import SkirmishServer

#if canImport(Glibc)
    import Glibc
#endif

/// The caps on connections per prefix and under the open-file limit, as pure arithmetic (issue 24, items 4 and 5).
@Suite struct ConnectionCapsTests {
    static func host(_ text: String) throws -> SourceHost {
        SourceHost(try #require(DatagramAddress(try SocketAddress(ipAddress: text, port: 1))))
    }

    @Test func aPrefixHoldsAtMostItsCapWhateverItsHosts() throws {
        var limits = ServerConfiguration.ConnectionLimits()
        limits.maxConnections = 100
        limits.maxConnectionsPerHost = 3
        limits.maxConnectionsPerPrefix = 5
        var caps = ConnectionCaps(limits, hosts: .standard)
        let hosts = try ["127.0.9.1", "127.0.9.1", "127.0.9.1", "127.0.9.1", "127.0.9.2", "127.0.9.2", "127.0.9.3"]
            .map(Self.host)
        let answers = hosts.map { caps.admit($0) }
        #expect(answers == [nil, nil, nil, .hostConnectionsFull, nil, nil, .prefixConnectionsFull])
        #expect(caps.open == 5)
        // Another /24 is another prefix; a closed connection gives its place back.
        #expect(caps.admit(try Self.host("127.0.10.1")) == nil)
        caps.release(hosts[0])
        #expect(caps.admit(try Self.host("127.0.9.3")) == nil)
        #expect(caps.connections(ofPrefix: hosts[0]) == 5)
    }

    @Test func theCapsFitUnderTheOpenFileLimitAndKeepTheirProportions() {
        let standard = ServerConfiguration.ConnectionLimits.standard
        // 1,024 descriptors: 128 kept for the listeners, loops, logs and refusals; 896 for connections.
        let fitted = standard.fitted(toDescriptors: 1_024)
        #expect(fitted.maxConnections == 896)
        #expect(fitted.maxConnectionsPerHost == 56, "1/16 of the connections, as 1,024 of 16,384")
        #expect(fitted.maxConnectionsPerPrefix == 112, "1/8, as 2,048 of 16,384")
        // An in-process server lets one host hold all of them, still under the limit.
        let inProcess = ServerConfiguration.ConnectionLimits().fitted(toDescriptors: 1_024)
        #expect(inProcess.maxConnectionsPerHost == 896)
        // A limit with room for every connection changes nothing.
        #expect(standard.fitted(toDescriptors: 1 << 20) == standard)
        #expect(standard.fitted(toDescriptors: 10).maxConnections >= 1)
    }
}

/// The same caps on real loopback sockets, from several hosts of 127.0.0.0/8 (issue 24, items 4 and 5).
@Suite(.serialized) struct ConnectionShareTests {
    static let notFound = Array("GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    static let metrics = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    static func answered(_ status: String) -> @Sendable ([UInt8]) -> Bool {
        { bytes in String(decoding: bytes, as: UTF8.self).contains("HTTP/1.1 \(status)") }
    }

    /// Six keep-alive connections of one /24 fill its cap: a seventh is refused while a player and a scrape from
    /// another network are served; the six are closed once they have held their place without a seat for the
    /// handshake limit, though each is far from idle, and the prefix is served again.
    @Test func aPrefixCannotHoldEveryConnectionNorKeepAliveWithoutASeat() async throws {
        let fixture = try await ServerFixture.start {
            $0.connections.maxConnectionsPerPrefix = 6
            // Far above the handshake limit: only the no-seat timer can close the held connections.
            $0.connections.idleTimeout = .seconds(120)
        }
        let httpPort = try #require(fixture.server.addresses.http?.port)
        let tcpPort = try #require(fixture.server.addresses.tcp?.port)
        var held: [RawStream] = []
        for index in 0..<6 {
            let stream = try await RawStream.connect(
                port: httpPort, group: fixture.group, from: "127.0.9.\(1 + index / 2)", sending: Self.notFound)
            _ = try await stream.read(within: .seconds(20), until: Self.answered("404"))
            held.append(stream)
        }
        let refused = try await RawStream.connect(port: httpPort, group: fixture.group, from: "127.0.9.7")
        try? await refused.write(Self.notFound)
        #expect(try await refused.readUntilClosed(within: .seconds(20)).isEmpty, "closed without a word")
        // Another network: a TCP player is seated and a scrape is answered.
        let player = try await RawStream.connect(port: tcpPort, group: fixture.group)
        try await player.write(RawStream.frame(ConnectionLimitTests.hello))
        _ = try await player.read(within: .seconds(20), until: ConnectionLimitTests.holdsWelcome)
        let scrape = try await RawStream.connect(port: httpPort, group: fixture.group, sending: Self.metrics)
        _ = try await scrape.read(within: .seconds(20), until: Self.answered("200"))
        #expect(try await fixture.stats().rejections(.prefixConnectionsFull) == 1)
        // The held connections keep asking (a GET well within the idle timeout) and are closed all the same. On a
        // busy machine the steps above can outlast the handshake limit: a connection already closed asks no more.
        for stream in held where !stream.isClosed {
            stream.clear()
            try? await stream.write(Self.notFound)
            _ = try? await stream.read(within: .seconds(20)) { Self.answered("404")($0) || stream.isClosed }
        }
        for stream in held { _ = try await stream.readUntilClosed(within: .seconds(60)) }
        let again = try await RawStream.connect(
            port: httpPort, group: fixture.group, from: "127.0.9.7", sending: Self.notFound)
        _ = try await again.read(within: .seconds(20), until: Self.answered("404"))
        let stats = try await fixture.stats()
        #expect(
            stats.totalRejected == stats.rejections(.prefixConnectionsFull), "an HTTP keep-alive ended is no refusal")
        #expect(stats.rejections(.idleTimeout) == 0)
        #expect(stats.rejections(.handshakeTimeout) == 0, "the TCP player took its seat in time")
        for stream in [again, scrape, player] { await stream.close() }
        await fixture.stop()
    }

    /// Under an open-file limit of 200 the standard caps shrink to 124 connections, 7 per host and 15 per prefix:
    /// one host's tenth connection is refused at once, and a scrape from another host is answered.
    @Test func theCapsFollowTheOpenFileLimit() async throws {
        let fixture = try await ServerFixture.start {
            $0.connections = .standard
            $0.connections.descriptorLimit = 200
        }
        let limits = try await fixture.server.loop.submit { fixture.server.state.value.connections.limits }.get()
        #expect(limits.maxConnections == 124)
        #expect(limits.maxConnectionsPerHost == 7)
        #expect(limits.maxConnectionsPerPrefix == 15)
        let tcpPort = try #require(fixture.server.addresses.tcp?.port)
        var streams: [RawStream] = []
        for _ in 0..<10 {
            streams.append(try await RawStream.connect(port: tcpPort, group: fixture.group, from: "127.0.8.1"))
        }
        try await eventually(within: .seconds(20)) {
            try await fixture.stats().rejections(.hostConnectionsFull) == 3
        }
        let scrape = try await RawStream.connect(
            port: try #require(fixture.server.addresses.http?.port), group: fixture.group, sending: Self.metrics)
        _ = try await scrape.read(within: .seconds(20), until: Self.answered("200"))
        for stream in streams + [scrape] { await stream.close() }
        await fixture.stop()
        // A server left to read the process's own limit never caps above it (read once the server has raised it).
        let own = try await ServerFixture.start()
        let fitted = try await own.server.loop.submit { own.server.state.value.connections.limits }.get()
        await own.stop()
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let descriptors = Int(clamping: limit.rlim_cur)
        #expect(
            fitted.maxConnections
                <= max(1, descriptors - ServerConfiguration.ConnectionLimits.reserved(under: descriptors)))
    }
}
