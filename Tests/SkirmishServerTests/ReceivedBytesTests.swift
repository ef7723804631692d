import NIOCore
import SkirmishTelemetry
import SkirmishWire
import Testing

@testable import SkirmishServer

/// Issue 32, item 5: `skirmish_server_bytes_received_total` counts game traffic only, on real loopback sockets.
@Suite(.serialized) struct ReceivedBytesTests {
    static func request(_ path: String) -> [UInt8] {
        Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
    }

    /// One `GET /metrics` on a new connection, as a scraper makes it: the counter's value in the response.
    static func scrape(_ fixture: ServerFixture) async throws -> UInt64 {
        let stream = try await RawStream.connect(
            port: try #require(fixture.server.addresses.http?.port), group: fixture.group,
            sending: Self.request("/metrics"))
        let response = String(decoding: try await stream.readUntilClosed(within: .seconds(20)), as: UTF8.self)
        let name = SkirmishMetrics.serverBytesReceived.name
        let line = try #require(
            response.split(separator: "\n").first { $0.hasPrefix(name + "{") || $0.hasPrefix(name + " ") },
            "no \(name) in the scrape: \(response)")
        return try #require(line.split(separator: " ").last.flatMap { UInt64($0) }, "\(line)")
    }

    @Test func scrapesAndOtherHTTPRequestsAreNotCountedAndGameBytesAre() async throws {
        let fixture = try await ServerFixture.start()
        let first = try await Self.scrape(fixture)
        let second = try await Self.scrape(fixture)
        #expect(first == 0, "no game traffic yet")
        #expect(second == first, "a scrape's own request is not counted")
        // A request for another route (here one the server does not serve) is no game traffic either.
        let other = try await RawStream.connect(
            port: try #require(fixture.server.addresses.http?.port), group: fixture.group,
            sending: Self.request("/nowhere"))
        _ = try await other.readUntilClosed(within: .seconds(20))
        #expect(try await fixture.stats().bytesReceived == 0)
        // A TCP Hello is: its frame, length prefix included, and nothing else.
        let player = try await RawStream.connect(
            port: try #require(fixture.server.addresses.tcp?.port), group: fixture.group)
        let frame = RawStream.frame(ConnectionLimitTests.hello)
        try await player.write(frame)
        _ = try await player.read(within: .seconds(20), until: ConnectionLimitTests.holdsWelcome)
        #expect(try await Self.scrape(fixture) == UInt64(frame.count))
        await player.close()
        await fixture.stop()
    }
}
