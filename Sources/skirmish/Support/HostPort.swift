import ArgumentParser
import SkirmishServer

/// A `HOST:PORT` option value, such as `127.0.0.1:4000` or `[::1]:0`.
struct HostPort: ExpressibleByArgument, Sendable, Hashable {
    var host: String
    var port: Int

    init?(argument: String) {
        guard let colon = argument.lastIndex(of: ":") else { return nil }
        var host = String(argument[..<colon])
        guard let port = Int(argument[argument.index(after: colon)...]), (0...65_535).contains(port) else {
            return nil
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }

    init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    static var defaultCompletionKind: CompletionKind { .default }

    /// Shown as the default in `--help`.
    var defaultValueDescription: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    var listen: ServerConfiguration.Listen { ServerConfiguration.Listen(host: host, port: port) }
}
