import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A collector stand-in on 127.0.0.1, shared by the test targets that push (`SkirmishTestSupport`): it records every request body and answers 204, or 503 while it is "down".
///
/// One blocking thread, one request per connection (the exporter's libcurl handle reconnects as needed). A
/// ``blackHole()`` instead listens and never accepts: connections queue in the kernel and every request times out,
/// which is what a hung collector looks like.
package final class PushSink: Sendable {
    private struct State {
        var bodies: [String] = []
        var down = false
        var refused = 0
        var closed = false
    }

    package let port: Int
    private let socket: Int32
    private let state = Mutex(State())

    package var url: String { "http://127.0.0.1:\(port)" }

    /// Binds a listener on a free loopback port; `serve` starts the answering thread. Not `listening`, the port is
    /// only held: connections to it are refused until ``listenAndServe()``.
    private init(serve: Bool, fixedPort: Int = 0, listening: Bool = true) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(fixedPort).bigEndian
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, !listening || listen(fd, 64) == 0 else {
            Glibc.close(fd)
            throw CocoaError(.fileWriteUnknown)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        if serve {
            let thread = Thread { [self] in serveLoop() }
            thread.name = "push-sink"
            thread.start()
        }
    }

    /// A sink that answers.
    package static func start() throws -> PushSink { try PushSink(serve: true) }

    /// A port held for a collector that is down: bound but not listening, so every connection is refused, and no
    /// other socket can take the port before ``listenAndServe()`` brings the collector up on it (reserving a port by
    /// closing it and binding it again later lost it to another test's socket on a busy machine).
    package static func down() throws -> PushSink { try PushSink(serve: false, listening: false) }

    /// Starts listening on the held port and answering: a collector coming up where one was down.
    package func listenAndServe() throws {
        guard listen(socket, 64) == 0 else { throw CocoaError(.fileWriteUnknown) }
        let thread = Thread { [self] in serveLoop() }
        thread.name = "push-sink"
        thread.start()
    }

    /// A listener that never answers.
    package static func blackHole() throws -> PushSink { try PushSink(serve: false) }

    /// While down, every request is answered 503 and its body is not kept.
    package func setDown(_ down: Bool) { state.withLock { $0.down = down } }

    package var bodies: [String] { state.withLock { $0.bodies } }
    package var refused: Int { state.withLock { $0.refused } }

    package func close() {
        state.withLock { $0.closed = true }
        shutdown(socket, Int32(SHUT_RDWR))
        Glibc.close(socket)
    }

    private func serveLoop() {
        // Bounded by the test's life: `close()` makes accept fail and the loop end.
        while !state.withLock({ $0.closed }) {
            let client = accept(socket, nil, nil)
            guard client >= 0 else { return }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            handle(client)
            Glibc.close(client)
        }
    }

    private func handle(_ client: Int32) {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var expected: Int?
        // At most 4,096 reads of up to 64 KiB: a push is far smaller.
        for _ in 0..<4_096 {
            let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            data += chunk[..<count]
            if expected == nil, let end = data.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
                let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                expected = end.upperBound + (length ?? 0)
            }
            if let expected, data.count >= expected { break }
        }
        guard let end = data.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
        let body = String(decoding: data[end.upperBound...], as: UTF8.self)
        let down = state.withLock { state -> Bool in
            if state.down {
                state.refused += 1
            } else {
                state.bodies.append(body)
            }
            return state.down
        }
        let reply =
            down
            ? "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            : "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        _ = Array(reply.utf8).withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
