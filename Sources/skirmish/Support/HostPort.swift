import ArgumentParser
import SkirmishServer

/// A `HOST:PORT` option value, such as `127.0.0.1:4000` or `[::1]:0`.
struct HostPort: ExpressibleByArgument, CustomStringConvertible, Sendable, Hashable {
    var host: String
    var port: Int

    init?(argument: String) {
        guard let value = try? Self.parse(argument) else { return nil }
        self = value
    }

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// Shown as the default in `--help`.
    var defaultValueDescription: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    var description: String { defaultValueDescription }

    /// Parses `host:port`, or says what is wrong with it (a port out of range, no colon, no host), where a plain
    /// `ExpressibleByArgument` could only say "invalid"; argument-parser names the option before the reason.
    @Sendable
    static func parse(_ text: String) throws -> HostPort {
        guard let colon = text.lastIndex(of: ":") else {
            throw ValidationError("expected host:port, such as 127.0.0.1:9100 or [::1]:9100")
        }
        let port = text[text.index(after: colon)...]
        guard let number = Int(port), (0...65_535).contains(number) else {
            throw ValidationError("the port '\(port)' is not a number from 0 to 65535 (0 picks a free one)")
        }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw ValidationError("the host before the port is empty") }
        return HostPort(host: String(host), port: number)
    }

    var listen: ServerConfiguration.Listen { ServerConfiguration.Listen(host: host, port: port) }
}
