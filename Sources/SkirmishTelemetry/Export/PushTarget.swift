import Foundation

/// One collector to push to: where, in which format, with which credentials and timeout.
///
/// Built from the `--push URL --format F` flags. A URL with no path gets the collector's usual endpoint for the
/// format (`/metrics/job/skirmish` for Pushgateway, `/api/v1/import/prometheus` for VictoriaMetrics, `/write?db=
/// skirmish` for InfluxDB, `/v1/metrics` for OTLP, `/api/v1/import` for JSON lines). Credentials in the URL
/// (`http://user:pass@host`) become basic auth and are removed from the URL, so they never reach a log line.
public struct PushTarget: Sendable, Hashable {
    /// How the exporter authenticates.
    public enum Auth: Sendable, Hashable {
        /// No credentials.
        case none
        /// `Authorization: Bearer <token>`.
        case bearer(String)
        /// HTTP basic authentication.
        case basic(user: String, password: String)
    }

    /// The endpoint without credentials; for ``MetricsFormat/prom`` the grouping path is added by ``endpoint(runID:shard:)``.
    public var url: String
    /// The payload format.
    public var format: MetricsFormat
    /// Credentials.
    public var auth: Auth
    /// The longest one push may take, connection included.
    public var timeout: Duration

    /// Parses a push URL.
    ///
    /// - Throws: ``PushTargetError`` naming the URL, what is wrong and an example that works.
    public init(
        parsing text: String, format: MetricsFormat, auth: Auth = .none, timeout: Duration = .seconds(5)
    ) throws(PushTargetError) {
        let parts = try PushTarget.components(of: text)
        var parsedAuth = auth
        if let user = parts.user {
            parsedAuth = .basic(user: user, password: parts.password ?? "")
        }
        var pathAndQuery = parts.percentEncodedPath + (parts.percentEncodedQuery.map { "?" + $0 } ?? "")
        if pathAndQuery.isEmpty || pathAndQuery == "/" { pathAndQuery = PushTarget.defaultPath(for: format) }
        if format == .influx { pathAndQuery = PushTarget.forcingMillisecondPrecision(pathAndQuery) }
        guard timeout > .zero else { throw PushTargetError(url: text, problem: "the timeout must be positive") }
        self.url = "\(parts.scheme ?? "http")://\(PushTarget.authority(parts))" + pathAndQuery
        self.format = format
        self.auth = parsedAuth
        self.timeout = timeout
    }

    /// Parses a push URL with Foundation's `URLComponents` and checks what a collector URL needs: an http(s)
    /// scheme, a host, a port from 1 to 65535, no fragment. A character that must be percent-encoded (a space) is
    /// refused here, before anything starts, rather than by every push attempt.
    public static func components(of text: String) throws(PushTargetError) -> URLComponents {
        // Strict parsing: Foundation would otherwise percent-encode a stray space and accept the URL.
        guard let parts = URLComponents(string: text, encodingInvalidCharacters: false) else {
            let hint =
                text.contains(where: \.isWhitespace)
                ? "it contains a space (percent-encode it as %20)"
                : "it is not a valid URL (a character that must be percent-encoded, or a port that is not a number)"
            throw PushTargetError(url: text, problem: hint)
        }
        guard let scheme = parts.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw PushTargetError(url: text, problem: "the URL must start with http:// or https://")
        }
        guard let host = parts.host, !host.isEmpty else {
            throw PushTargetError(url: text, problem: "the URL has no host")
        }
        if let port = parts.port, !(1...65_535).contains(port) {
            throw PushTargetError(url: text, problem: "the port \(port) is not a number from 1 to 65535")
        }
        guard parts.fragment == nil else {
            throw PushTargetError(url: text, problem: "a push URL has no #fragment")
        }
        return parts
    }

    /// `host[:port]` as it goes on the wire, an IPv6 host in brackets, credentials left out.
    static func authority(_ parts: URLComponents) -> String {
        var host = parts.percentEncodedHost ?? ""
        if host.contains(":") && !host.hasPrefix("[") { host = "[\(host)]" }
        return host + (parts.port.map { ":\($0)" } ?? "")
    }

    /// What a payload looks like: its format, and for Influx lines whether the field is taken from the name.
    struct Payload: Hashable {
        let format: MetricsFormat
        let fieldFromName: Bool
    }

    /// Influx lines for VictoriaMetrics' `/influx/write`, which stores `<measurement>_<field>`: the field is taken
    /// from the metric's name (``MetricsRenderer/renderInflux(_:fieldFromName:)``) so the series keep the names the
    /// dashboards use instead of becoming `…_value`.
    public var influxFieldFromName: Bool {
        guard format == .influx else { return false }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return path.hasSuffix("/influx/write")
    }

    var payload: Payload { Payload(format: format, fieldFromName: influxFieldFromName) }

    /// The body of one push of `snapshot` to this target.
    func render(_ snapshot: MetricsSnapshot) -> [UInt8] {
        influxFieldFromName
            ? MetricsRenderer.renderInflux(snapshot, fieldFromName: true) : MetricsRenderer.render(snapshot, as: format)
    }

    /// A short name for labels and the summary: `<format>@<host:port>`.
    public var name: String {
        let rest = url.drop { $0 != "/" }.dropFirst(2)
        return "\(format.rawValue)@" + rest.prefix { $0 != "/" && $0 != "?" }
    }

    /// The URL a push goes to; for Pushgateway the grouping key `/run/<id>/shard/<n>` is appended.
    ///
    /// Pushgateway's `PUT` replaces its whole group, so each shard of each run owns one group and never erases
    /// another's. Values outside `[A-Za-z0-9._-]` use Pushgateway's `@base64` form.
    public func endpoint(runID: String, shard: String) -> String {
        guard format == .prom else { return url }
        let queryStart = url.firstIndex(of: "?") ?? url.endIndex
        var path = String(url[..<queryStart])
        while path.hasSuffix("/") { path.removeLast() }
        return path + PushTarget.groupingSegment("run", runID) + PushTarget.groupingSegment("shard", shard)
            + url[queryStart...]
    }

    /// `PUT` for Pushgateway (replace the group: what was pushed last is the truth), `POST` elsewhere.
    var method: String { format == .prom ? "PUT" : "POST" }

    /// The format a collector URL implies by its path or well-known port, or `nil` when it says nothing.
    ///
    /// Lets `--push http://host:8428/api/v1/import/prometheus` work without a `--format`; a URL that could be any
    /// collector (a bare host on an unusual port, a webhook) needs an explicit format.
    public static func inferredFormat(for text: String) -> MetricsFormat? {
        guard let parts = try? components(of: text) else { return nil }
        let path = parts.path.lowercased()
        let port = parts.port
        if path.hasPrefix("/metrics/job/") { return .prom }
        if path.hasSuffix("/api/v1/import/prometheus") { return .vm }
        if path.hasSuffix("/api/v1/import") { return .json }
        if path.hasSuffix("/write") || path.hasSuffix("/influx/write") || path.hasSuffix("/api/v2/write") {
            return .influx
        }
        if path.hasSuffix("/v1/metrics") { return .otlp }
        guard path.isEmpty || path == "/" else { return nil }
        switch port {
        case 9091: return .prom
        case 8428: return .vm
        case 8086: return .influx
        case 4318: return .otlp
        default: return nil
        }
    }

    static func defaultPath(for format: MetricsFormat) -> String {
        switch format {
        case .prom: "/metrics/job/skirmish"
        case .vm: "/api/v1/import/prometheus"
        case .influx: "/write?db=skirmish"
        case .otlp: "/v1/metrics"
        case .json: "/api/v1/import"
        }
    }

    /// Timestamps are milliseconds; without `precision=ms` InfluxDB reads them as nanoseconds (1970).
    static func forcingMillisecondPrecision(_ pathAndQuery: String) -> String {
        guard let question = pathAndQuery.firstIndex(of: "?") else { return pathAndQuery + "?precision=ms" }
        let path = pathAndQuery[..<question]
        let items = pathAndQuery[pathAndQuery.index(after: question)...].split(separator: "&")
            .filter { !$0.hasPrefix("precision=") }
        return path + "?" + (items + ["precision=ms"]).joined(separator: "&")
    }

    static func groupingSegment(_ name: String, _ value: String) -> String {
        let plain =
            !value.isEmpty
            && value.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            }
        if plain { return "/\(name)/\(value)" }
        return "/\(name)@base64/" + (value.isEmpty ? "=" : base64URL(Array(value.utf8)))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var word: UInt32 = 0
            for (offset, byte) in chunk.enumerated() { word |= UInt32(byte) << (16 - 8 * UInt32(offset)) }
            for slot in 0..<4 {
                if slot <= chunk.count {
                    out.append(alphabet[Int((word >> (18 - 6 * UInt32(slot))) & 0x3F)])
                } else {
                    out.append(0x3D)
                }
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A push URL that cannot be used, with what is wrong and how to write one that works.
public struct PushTargetError: Error, Sendable, CustomStringConvertible {
    /// The URL as given.
    public let url: String
    /// What is wrong with it.
    public let problem: String

    /// The message for the user.
    public var description: String {
        "--push '\(url)': \(problem); write it like http://127.0.0.1:9091 or https://user:token@host:8428/path"
    }
}
