import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listener the server could not open: which one, where, and the system's reason.
public struct ListenError: Error, CustomStringConvertible {
    /// "udp", "tcp" or "http".
    public let transport: String
    /// The address the listener was to bind.
    public let host: String
    /// The port the listener was to bind (0: any free one).
    public let port: Int
    /// The system's reason, e.g. "Address already in use".
    public let reason: String
    /// The errno of the failed call, when there was one.
    public let errno: CInt?

    /// The listener, the system's reason and what to do: another port, another address, or stop the other process.
    public var description: String {
        var text = "cannot listen for \(transport) on \(host):\(port): \(reason)."
        if errno == 98 { // EADDRINUSE
            text += " Another process holds that port: stop it, or choose another with --\(transport) HOST:PORT"
            text += " (port 0 picks a free one)."
        } else if errno == 99 { // EADDRNOTAVAIL
            text += " No interface of this machine has that address: use 127.0.0.1 or ::1."
        } else if errno == 13 { // EACCES
            text += " Ports below 1024 need privileges: choose a port of 1024 or more."
        }
        return text
    }

    /// Runs `bind`, turning a failure into a ``ListenError`` naming the listener.
    package static func naming<T>(_ transport: String, host: String, port: Int, _ bind: () async throws -> T)
        async throws -> T
    {
        do {
            return try await bind()
        } catch let error as IOError {
            throw ListenError(
                transport: transport, host: host, port: port, reason: Self.reason(error), errno: error.errnoCode)
        } catch let error as SocketAddressError {
            throw ListenError(transport: transport, host: host, port: port, reason: "\(error)", errno: nil)
        }
    }

    private static func reason(_ error: IOError) -> String {
        switch error.errnoCode {
        case EADDRINUSE: "address already in use"
        case EADDRNOTAVAIL: "address not available"
        case EACCES: "permission denied"
        default: "\(error)"
        }
    }
}
