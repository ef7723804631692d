#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A blocking HTTP/1.1 `GET` to a port on 127.0.0.1, for reading a server's `/metrics` between benchmark steps.
///
/// Blocking on purpose: the benchmarks call it from their controlling task between measurements, never on an
/// event loop, and a few lines of sockets keep NIO's machinery out of what is being measured. `Connection: close`,
/// so a body without a length ends with the connection.
package struct LoopbackHTTPClient: Sendable {
    /// The longest the whole request may take, connection included.
    package var timeout: Duration

    package init(timeout: Duration = .seconds(5)) {
        self.timeout = timeout
    }

    /// `GET http://127.0.0.1:<port><path>`.
    package func get(port: Int, path: String) throws(HTTPClientError) -> HTTPResponse {
        let url = "http://127.0.0.1:\(port)\(path)"
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw .cannotConnect(url: url, reason: "socket(): \(Self.errorText())") }
        defer { close(socket) }
        let deadline = ContinuousClock.now + timeout
        setReceiveTimeout(socket, remaining: timeout)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw .cannotConnect(url: url, reason: Self.errorText()) }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        let sent = request.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        guard sent == request.utf8.count else { throw .closedEarly(url: url, received: 0) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw .timedOut(url: url, after: timeout, received: response.count) }
            setReceiveTimeout(socket, remaining: remaining)
            let count = recv(socket, &chunk, chunk.count, 0)
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw .timedOut(url: url, after: timeout, received: response.count)
                }
                throw .closedEarly(url: url, received: response.count)
            }
            if count > 0 { response += chunk[..<count] }
            do {
                if let parsed = try HTTPResponseParser.parse(response, atEOF: count == 0) { return parsed }
            } catch {
                throw .malformed(url: url, reason: error.reason)
            }
            if count == 0 { throw .closedEarly(url: url, received: response.count) }
        }
    }

    private func setReceiveTimeout(_ socket: Int32, remaining: Duration) {
        let (seconds, attoseconds) = remaining.components
        // At least a millisecond: a zero timeout would mean "block forever".
        let microseconds = max(seconds > 0 ? 0 : 1_000, attoseconds / 1_000_000_000_000)
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(microseconds))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
