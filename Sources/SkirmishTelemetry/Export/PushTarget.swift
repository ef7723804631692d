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
        let lowered = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else {
            throw PushTargetError(url: text, problem: "the URL must start with http:// or https://")
        }
        let rest = text.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        var pathAndQuery = String(rest[authorityEnd...])
        var parsedAuth = auth
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            parsedAuth = .basic(
                user: PushTarget.percentDecode(String(parts[0])),
                password: parts.count > 1 ? PushTarget.percentDecode(String(parts[1])) : "")
        }
        guard !authority.isEmpty else { throw PushTargetError(url: text, problem: "the URL has no host") }
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let port = authority[authority.index(after: colon)...]
            guard let number = Int(port), (1...65_535).contains(number) else {
                throw PushTargetError(url: text, problem: "the port '\(port)' is not a number from 1 to 65535")
            }
        }
        if pathAndQuery.isEmpty || pathAndQuery == "/" { pathAndQuery = PushTarget.defaultPath(for: format) }
        if format == .influx { pathAndQuery = PushTarget.forcingMillisecondPrecision(pathAndQuery) }
        guard timeout > .zero else { throw PushTargetError(url: text, problem: "the timeout must be positive") }
        self.url = scheme + authority + pathAndQuery
        self.format = format
        self.auth = parsedAuth
        self.timeout = timeout
    }

    /// A warning for a combination that works but surprises, or `nil`: Influx lines pushed to VictoriaMetrics'
    /// `/influx/write` are stored as `<measurement>_<field>`, so every metric becomes `…_value` and the dashboards
    /// (which use the Prometheus names) find nothing. `--format vm` to `/api/v1/import/prometheus` keeps the names.
    public var caveat: String? {
        guard format == .influx, url.contains("/influx/write") else { return nil }
        return "--push \(url): VictoriaMetrics stores Influx lines as <name>_value (skirmish_bots_connected_value), "
            + "which the dashboards do not read; push --format vm to /api/v1/import/prometheus instead"
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
        let lowered = text.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) else { return nil }
        let rest = lowered.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let path = String(rest[authorityEnd...].prefix { $0 != "?" })
        let port = rest[..<authorityEnd].split(separator: "@").last?.split(separator: ":").last.flatMap { Int($0) }
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

    static func percentDecode(_ text: String) -> String {
        var out: [UInt8] = []
        var bytes = text.utf8[...]
        while let byte = bytes.popFirst() {
            if byte == 0x25, bytes.count >= 2,
                let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
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
