import SkirmishWire

/// A server address with its transport: `udp://127.0.0.1:4000`, `tcp://host:4001`, `ws://host:8080/ws`.
public struct Target: Sendable, Hashable, CustomStringConvertible {
    /// UDP, TCP or WebSocket.
    public var transport: Transport
    /// A host name, or an IPv4 or IPv6 address (IPv6 without brackets).
    public var host: String
    /// The server's port for that transport, 1–65535.
    public var port: Int
    /// The WebSocket path (`/ws` by default); unused by UDP and TCP.
    public var path: String

    /// A target; the path is only used by WebSocket.
    public init(transport: Transport, host: String, port: Int, path: String = "/ws") {
        self.transport = transport
        self.host = host
        self.port = port
        self.path = path
    }

    /// Parses `scheme://host:port[/path]`; IPv6 hosts go in brackets (`udp://[::1]:4000`).
    public init(parsing text: String) throws(TargetError) {
        let parts = text.split(separator: "://", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw TargetError(text: text, problem: "it has no scheme") }
        let scheme = parts[0].lowercased()
        guard let transport = Transport(rawValue: scheme) else {
            throw TargetError(text: text, problem: "`\(scheme)` is not a transport")
        }
        var rest = parts[1]
        var path = "/ws"
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        let host: String
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                throw TargetError(text: text, problem: "an IPv6 host needs brackets and a port, like [::1]:4000")
            }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            portText = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw TargetError(text: text, problem: "it has no port")
            }
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty else { throw TargetError(text: text, problem: "it has no host") }
        guard let port = Int(portText), (1...65_535).contains(port) else {
            throw TargetError(text: text, problem: "`\(portText)` is not a port between 1 and 65535")
        }
        self.init(transport: transport, host: host, port: port, path: path)
    }

    /// The target as ``init(parsing:)`` reads it: `udp://127.0.0.1:4000`, `ws://[::1]:8080/ws`.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return transport == .webSocket
            ? "ws://\(shownHost):\(port)\(path)" : "\(transport.rawValue)://\(shownHost):\(port)"
    }
}

/// A target that could not be parsed, with what to write instead.
public struct TargetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text as given.
    public var text: String
    /// What is wrong with it (`it has no port`).
    public var problem: String

    /// The text, what is wrong, and the forms a target takes.
    public var description: String {
        "`\(text)` is not a target: \(problem). Write udp://HOST:PORT, tcp://HOST:PORT or ws://HOST:PORT/PATH, "
            + "for example udp://127.0.0.1:4000."
    }
}
