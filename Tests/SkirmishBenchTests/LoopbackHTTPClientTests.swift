import Foundation
import NIOPosix
import SkirmishServer
import Testing

@testable import SkirmishBench

#if canImport(Glibc)
    import Glibc
#endif

/// A one-connection HTTP peer on 127.0.0.1: accepts, reads the request head, writes each of `parts`, then either
/// closes or holds the connection open until the client closes it (no sleeps: it waits on the client's close).
final class ScriptedPeer: Sendable {
    let port: Int
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)

    enum Ending: Sendable { case close, holdUntilClientCloses }

    init(parts: [[UInt8]], ending: Ending) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 4) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else { throw BenchError("test peer: bind failed, errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        let done = done
        Thread {
            defer { done.signal() }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var request: [UInt8] = []
            var byte: UInt8 = 0
            while !request.suffix(4).elementsEqual([13, 10, 13, 10]), recv(connection, &byte, 1, 0) == 1 {
                request.append(byte)
            }
            for part in parts { _ = part.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) } }
            if ending == .holdUntilClientCloses {
                while recv(connection, &byte, 1, 0) > 0 {}
            }
        }.start()
    }

    /// Waits for the peer's thread to end, then closes the listener.
    func finish() {
        done.wait()
        close(listener)
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
}

@Suite struct LoopbackHTTPClientTests {
    let client = LoopbackHTTPClient(timeout: .seconds(20))

    @Test func readsAContentLengthBody() throws {
        let peer = try ScriptedPeer(
            parts: [
                ScriptedPeer.bytes("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello"),
                ScriptedPeer.bytes(" world"),
            ], ending: .holdUntilClientCloses)
        defer { peer.finish() }
        // The peer holds the connection open: the client must stop at Content-Length, not wait for a close.
        let response = try client.get(port: peer.port, path: "/metrics")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/plain")
        #expect(response.text == "hello world")
    }

    @Test func readsAChunkedBodySplitAcrossWrites() throws {
        let peer = try ScriptedPeer(
            parts: [
                ScriptedPeer.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"),
                ScriptedPeer.bytes("cde\r\nA;ext=1\r\n0123456789\r\n"),
                ScriptedPeer.bytes("0\r\n\r\n"),
            ], ending: .holdUntilClientCloses)
        defer { peer.finish() }
        let response = try client.get(port: peer.port, path: "/")
        #expect(response.text == "abcde0123456789")
    }

    @Test func returnsOtherStatusCodesAndBodiesEndedByClose() throws {
        let peer = try ScriptedPeer(
            parts: [ScriptedPeer.bytes("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\nno such path")],
            ending: .close)
        defer { peer.finish() }
        let response = try client.get(port: peer.port, path: "/nothing")
        #expect(response.status == 404)
        #expect(response.text == "no such path")
    }

    @Test func aPeerClosingBeforeTheBodyIsCompleteIsATypedError() throws {
        let peer = try ScriptedPeer(
            parts: [ScriptedPeer.bytes("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a little")],
            ending: .close)
        defer { peer.finish() }
        #expect(throws: HTTPClientError.closedEarly(url: "http://127.0.0.1:\(peer.port)/metrics", received: 53)) {
            try client.get(port: peer.port, path: "/metrics")
        }
    }

    @Test func aSilentPeerTimesOut() throws {
        let peer = try ScriptedPeer(parts: [ScriptedPeer.bytes("HTTP/1.1 200 OK\r\n")], ending: .holdUntilClientCloses)
        defer { peer.finish() }
        let impatient = LoopbackHTTPClient(timeout: .milliseconds(300))
        let started = ContinuousClock.now
        do {
            _ = try impatient.get(port: peer.port, path: "/metrics")
            Issue.record("a peer that never finished its response gave a response")
        } catch {
            guard case .timedOut(let url, let after, let received) = error else {
                Issue.record("expected a timeout, got \(error)")
                return
            }
            #expect(url == "http://127.0.0.1:\(peer.port)/metrics")
            #expect(after == .milliseconds(300))
            #expect(received == 17)
        }
        #expect(started.duration(to: .now) >= .milliseconds(300))
    }

    @Test func aMalformedStatusLineIsATypedError() throws {
        let peer = try ScriptedPeer(parts: [ScriptedPeer.bytes("SSH-2.0-OpenSSH\r\n\r\n")], ending: .close)
        defer { peer.finish() }
        #expect(
            throws: HTTPClientError.malformed(
                url: "http://127.0.0.1:\(peer.port)/", reason: "the status line `SSH-2.0-OpenSSH`")
        ) {
            try client.get(port: peer.port, path: "/")
        }
    }

    @Test func aClosedPortCannotBeReached() throws {
        let peer = try ScriptedPeer(parts: [], ending: .close)
        let port = peer.port
        // Connect once so the peer's thread ends, then close the listener: nothing listens on the port any more.
        _ = try? client.get(port: port, path: "/")
        peer.finish()
        do {
            _ = try client.get(port: port, path: "/")
            Issue.record("a closed port answered")
        } catch {
            guard case .cannotConnect(let url, _) = error else {
                Issue.record("expected cannotConnect, got \(error)")
                return
            }
            #expect(url == "http://127.0.0.1:\(port)/")
            #expect(error.description.contains("is the server running"))
        }
    }

    @Test func fetchRefusesANon200Status() throws {
        let peer = try ScriptedPeer(
            parts: [ScriptedPeer.bytes("HTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nno")], ending: .close)
        defer { peer.finish() }
        #expect(throws: HTTPClientError.unexpectedStatus(url: "http://127.0.0.1:\(peer.port)/metrics", status: 500)) {
            try PrometheusText.fetch(port: peer.port, client: client)
        }
    }

    /// The reference server's own `/metrics` parses, with the counters the swarm benchmark reads.
    @Test func parsesTheReferenceServersOwnMetrics() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = ServerConfiguration()
        configuration.tcp = nil
        let server = try await ReferenceServer.start(configuration: configuration, group: group)
        let port = try #require(server.addresses.http?.port)
        // A server whose loop a busy machine stalled may have closed an idle connection before reading the request
        // (once: 0 bytes after a 36 s stall); this test is about parsing, so it asks again, at most three times.
        var fetched = Result { try PrometheusText.fetch(port: port, client: client) }
        for _ in 0..<2 {
            guard case .failure(let error) = fetched, "\(error)".contains("closed the connection after 0 bytes") else {
                break
            }
            fetched = Result { try PrometheusText.fetch(port: port, client: client) }
        }
        await server.shutdown()
        try await group.shutdownGracefully()
        let text = try fetched.get()
        #expect(text.samples.contains { $0.name == "skirmish_server_sessions" })
        #expect(text.types["skirmish_server_packets_sent_total"] == "counter")
        #expect(text.sum("skirmish_server_packets_sent_total") == 0)
    }

    @Test func incompleteResponsesNeedMoreBytes() throws {
        #expect(try HTTPResponseParser.parse(ScriptedPeer.bytes("HTTP/1.1 200 OK\r\nContent-Le"), atEOF: false) == nil)
        #expect(
            try HTTPResponseParser.parse(
                ScriptedPeer.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab"), atEOF: false)
                == nil)
        #expect(try HTTPResponseParser.parse(ScriptedPeer.bytes("HTTP/1.1 200 OK\r\n\r\nbody"), atEOF: false) == nil)
        #expect(
            try HTTPResponseParser.parse(ScriptedPeer.bytes("HTTP/1.1 204 No Content\r\n\r\n"), atEOF: false)?.body
                == [])
        #expect(throws: HTTPResponseParser.Malformed(reason: "the chunk size `zz`")) {
            try HTTPResponseParser.parse(
                ScriptedPeer.bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), atEOF: false)
        }
    }
}
