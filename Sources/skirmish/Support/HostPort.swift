import ArgumentParser
import SkirmishServer

/// A `HOST:PORT` option value, such as `127.0.0.1:4000` or `[::1]:0`.
struct HostPort: ExpressibleByArgument, CustomStringConvertible, Sendable, Hashable {
    var host: String
    var port: Int

    init?(argument: String) {
        guard let value = try? Self.parser(for: "")(argument) else { return nil }
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

    /// The parser of `option`'s value: a mistake is refused with what is wrong (a port out of range, no colon, no
    /// host), where a plain `ExpressibleByArgument` could only say "invalid".
    static func parser(for option: String) -> @Sendable (String) throws -> HostPort {
        { text in
            guard let colon = text.lastIndex(of: ":") else {
                throw ValidationError("\(option) '\(text)': expected host:port, such as 127.0.0.1:9100 or [::1]:9100")
            }
            let port = text[text.index(after: colon)...]
            guard let number = Int(port), (0...65_535).contains(number) else {
                throw ValidationError(
                    "\(option) '\(text)': the port '\(port)' is not a number from 0 to 65535 (0 picks a free one)")
            }
            var host = text[..<colon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            guard !host.isEmpty else { throw ValidationError("\(option) '\(text)': the host before the port is empty") }
            return HostPort(host: String(host), port: number)
        }
    }

    var listen: ServerConfiguration.Listen { ServerConfiguration.Listen(host: host, port: port) }
}
