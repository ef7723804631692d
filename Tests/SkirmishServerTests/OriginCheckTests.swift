import Foundation
import NIOCore
import SkirmishNet
import Testing

@testable import SkirmishServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `/ws` checks the browser's `Origin` against the page's own origin and the configured allow-list (issue 19,
/// item 1), on a real HTTP listener: a cross-site page gets 403 and no WebSocket.
@Suite struct OriginCheckTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends a WebSocket upgrade request to `/ws` and returns the response's status line.
    static func upgrade(port: Int, origin: String?, limit: Duration = .seconds(20)) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "connect: errno \(errno)") }
        var request =
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        if let origin { request += "Origin: \(origin)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard send(fd, bytes, bytes.count, 0) == bytes.count else { throw Failure(description: "send: errno \(errno)") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1_024)
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + limit
        while !response.contains(0x0A), ContinuousClock.now < deadline {
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            response += buffer[0..<count]
        }
        guard let end = response.firstIndex(of: 0x0D) ?? response.firstIndex(of: 0x0A) else {
            throw Failure(description: "no status line before the deadline")
        }
        return String(decoding: response[0..<end], as: UTF8.self)
    }

    static func status(port: Int, origin: String?) async throws -> String {
        let result: Result<String, any Error> = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: Result { try upgrade(port: port, origin: origin) }) }.start()
        }
        return try result.get()
    }

    @Test func aCrossSiteOriginIsRefusedWith403AndThePagesOwnOriginIsUpgraded() async throws {
        let fixture = try await ServerFixture.start { $0.allowedOrigins = ["https://game.example"] }
        let port = try #require(fixture.server.addresses.http?.port)
        #expect(try await Self.status(port: port, origin: "http://evil.example").hasPrefix("HTTP/1.1 403"))
        #expect(try await Self.status(port: port, origin: "null").hasPrefix("HTTP/1.1 403"))
        #expect(try await Self.status(port: port, origin: "http://127.0.0.1:\(port)").hasPrefix("HTTP/1.1 101"))
        #expect(try await Self.status(port: port, origin: "https://game.example").hasPrefix("HTTP/1.1 101"))
        #expect(try await Self.status(port: port, origin: nil).hasPrefix("HTTP/1.1 101"), "a program sends none")
        await fixture.stop()
    }
}
